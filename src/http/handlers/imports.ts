/**
 * POST /v1/results: the multipart upload of a scanner result. The form is
 * read after authentication, fields are checked as they arrive and the file
 * is parsed while it streams (DESIGN.md decision 11).
 */
import { ImportResultForm } from '../../api/schemas/imports.js';
import type { ImportsService } from '../../app/imports-service.js';
import { MAX_IMPORT_FILE_BYTES } from '../../domain/imports/importable.js';
import { InvalidRequestError } from '../../domain/errors.js';
import type { Operation } from '../api-router.js';
import { readMultipartForm, type MultipartLimits } from '../multipart-form.js';
import { presentImport } from '../../app/present/import.js';
import { parseBody } from './input.js';

const UPLOAD_LIMITS: MultipartLimits = { fileField: 'file', maxFileBytes: MAX_IMPORT_FILE_BYTES, maxFields: 10, maxFieldBytes: 4096 };

const ImportFields = ImportResultForm.omit({ file: true });

export const STREAMING_OPERATIONS = ['uploadResult'];

export function importOperations(imports: ImportsService): Record<string, Operation> {
  return {
    uploadResult: async ({ principal, req, res, validateBody }) => {
      const upload = imports.newUpload();
      try {
        const form = await readMultipartForm(req, res, UPLOAD_LIMITS, {
          onField: (name, value) => imports.checkField(principal.account, upload, name, value),
          onFileChunk: (chunk) => upload.write(chunk),
        });
        // The file part was streamed, not kept as a field; a marker stands in for it in the document's check.
        validateBody({ ...form.fields, ...(form.hasFile ? { file: 'streamed' } : {}) });
        const request = parseBody(ImportFields, form.fields);
        if (!form.hasFile) {
          const hint = 'file' in form.fields ? " ('file' was sent as a text field; send it as a file part, with a filename)" : '';
          throw new InvalidRequestError(`a file part named 'file' is required${hint}`);
        }
        return { data: presentImport(await imports.importResult(principal.account, request, upload.finish())) };
      } catch (error) {
        // The file was written as it arrived; a refused upload leaves nothing behind.
        await upload.discard();
        throw error;
      }
    },
  };
}
