import { z } from 'zod';
import { IMPORTABLE_SCAN_TYPES, MAX_IMPORT_FILE_BYTES, MAX_IMPORTED_TARGETS, describeBytes } from '../../domain/imports/importable.js';
import { MAX_TARGET_LENGTH } from '../../domain/targets/target-address.js';
import { Id } from './common.js';

export const ImportableScanType = z.enum(IMPORTABLE_SCAN_TYPES).meta({ id: 'ImportableScanType' });

/** The non-file fields; openapi-backend checks them against this after the handler has read the form. */
export const ImportResultForm = z
  .object({
    source_id: z.string().min(1).meta({ description: 'id of an IMPORTED source of this account (POST /v1/sources).' }),
    scan_type: ImportableScanType.meta({ description: 'NMAP, NMAP_UDP, OPENVAS, OWASP_ZAP or OWASP_ZAP_ACTIVE; any other type gives 400.' }),
    target: z.string().min(1).max(MAX_TARGET_LENGTH).optional().meta({
      description:
        'Required for OWASP_ZAP and OWASP_ZAP_ACTIVE: the URL that was scanned, held to the Target rules. Ignored for the other types, whose targets come from the file.',
    }),
    file: z.string().meta({
      format: 'binary',
      description: `Exactly one file part, at most ${describeBytes(MAX_IMPORT_FILE_BYTES)}: nmap XML (-oX) for NMAP and NMAP_UDP, an OpenVAS/Greenbone XML report for OPENVAS, a ZAP Traditional JSON report for the ZAP types.`,
    }),
  })
  .meta({ id: 'ImportResultForm' });

const RiskCount = z.number().int().min(0);

export const ImportedResult = z
  .object({
    scan_id: Id.meta({ description: 'The SUCCEEDED Scan the upload became; GET /v1/scans/{id} lists its risk ids and its result file.' }),
    source_id: z.string(),
    scan_type: ImportableScanType,
    targets: z.array(z.object({ target_id: z.string(), target: z.string() })).meta({
      description: `The targets the upload covered: inferred from the file's hosts (their addresses, or names when the file has no address) for NMAP, NMAP_UDP and OPENVAS, the target field for the ZAP types. At most ${MAX_IMPORTED_TARGETS}.`,
    }),
    skipped_hosts: z.array(z.object({ host: z.string(), reason: z.string() })).meta({
      description:
        'Hosts of the file that are not valid targets (private or reserved addresses, IPv6, ...): not imported, their findings dropped. At most 100 are listed.',
    }),
    risks: z.object({ new_open: RiskCount, still_open: RiskCount, closed: RiskCount }).meta({
      description: "How many of the targets' risks of this scan type the upload opened, found again, and closed, exactly as a scan would.",
    }),
  })
  .meta({ id: 'ImportedResult' });
