import { presentScan } from '../../app/present/scan.js';
import { StartScan } from '../../api/schemas/scans.js';
import type { ScansService } from '../../app/scans-service.js';
import type { Operation } from '../api-router.js';
import { sendResultFile } from '../result-download.js';
import { sendStreamedList } from '../send-rendered-list.js';
import { listQuery, parseBody } from './input.js';

export function scanOperations(scans: ScansService): Record<string, Operation> {
  return {
    startScan: async ({ principal, body }) => ({ data: presentScan((await scans.startShared(principal.account, parseBody(StartScan, body)))[0]!) }),
    listScans: async ({ principal, query, res }) => {
      await sendStreamedList(res, scans.listJson(principal.account, listQuery(query)));
      return undefined;
    },
    getScan: ({ principal, params }) => ({ data: presentScan(scans.get(principal.account, params.id!)) }),
    stopScan: ({ principal, params }) => ({ data: presentScan(scans.stop(principal.account, params.id!)) }),
    deleteScan: async ({ principal, params }) => {
      await scans.delete(principal.account, params.id!);
      return { data: { id: params.id!, deleted: true } };
    },
    getResultFile: async ({ principal, params, res }) => {
      sendResultFile(res, await scans.openResult(principal.account, params.id!));
      return undefined;
    },
  };
}
