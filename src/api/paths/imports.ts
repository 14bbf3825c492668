import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { MAX_IMPORT_FILE_BYTES, describeBytes } from '../../domain/imports/importable.js';
import { ErrorBody, dataEnvelope } from '../schemas/common.js';
import { ImportResultForm, ImportedResult } from '../schemas/imports.js';
import { STANDARD_ERRORS, json } from './common.js';

const LIMIT = describeBytes(MAX_IMPORT_FILE_BYTES);

export function registerImportPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/results',
    operationId: 'uploadResult',
    tags: ['Imported results'],
    summary: 'Upload a scanner result',
    description:
      `Imports the output of a scanner run elsewhere into an IMPORTED source. The upload becomes a SUCCEEDED Scan (condition reason Imported, the file as its result) whose risks join the same history as scans Vigil runs: a finding seen again is still_open, one no longer seen is closed. ` +
      `NMAP, NMAP_UDP and OPENVAS targets are inferred from the hosts in the file; hosts that are not valid targets are skipped and listed in skipped_hosts, and a file with no valid host gives 400. The ZAP types take the target field. ` +
      `New targets are created with origin UPLOADED_RESULTS (they cannot be updated or deleted); an address that already exists as a target of another origin gives 400 saying it already exists. nmap's best OS match and host name are stored on the target. ` +
      `The file is read as a stream: more than ${LIMIT}, a second file part, XML with a DOCTYPE declaring entities, nesting beyond 64 levels, bytes that are not UTF-8, or a file that is not the format of scan_type give 400 and store nothing.`,
    request: {
      body: { required: true, content: { 'multipart/form-data': { schema: ImportResultForm } } },
    },
    responses: {
      200: json(dataEnvelope(ImportedResult).meta({ id: 'ImportedResultResponse' }), 'The upload was imported.'),
      ...STANDARD_ERRORS,
      400: json(
        ErrorBody,
        `Invalid fields, no file or more than one, a file over ${LIMIT}, a file that is not the format of scan_type, a malformed multipart body, or a target that already exists from another origin; error says which.`,
      ),
    },
  });
}
