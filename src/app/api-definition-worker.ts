/**
 * Worker thread of api-definition-check.ts: checks one uploaded API
 * definition and answers with its summary, or the refusal's sentence.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InvalidRequestError } from '../domain/errors.js';
import { checkApiDefinitionHere } from './api-definition.js';

const { fileName, content } = workerData as { fileName: string; content: Uint8Array };
checkApiDefinitionHere(fileName, Buffer.from(content.buffer, content.byteOffset, content.byteLength)).then(
  (summary) => parentPort!.postMessage({ ok: true, summary }),
  (error: unknown) => parentPort!.postMessage({ ok: false, invalid: error instanceof InvalidRequestError, message: (error as Error).message ?? String(error) }),
);
