/**
 * POST /v1/targets/{id}/auth/selenium and POST /v1/targets/{id}/openapi:
 * one multipart `file` part of at most 1 MiB, collected while it streams
 * (the limit holds at the byte that breaks it) and checked whole.
 */
import { Buffer } from 'node:buffer';
import type { TargetAttachmentsService } from '../../app/target-attachments-service.js';
import { InvalidRequestError } from '../../domain/errors.js';
import { MAX_ATTACHMENT_BYTES } from '../../domain/targets/login-recording.js';
import type { Operation, OperationInput } from '../api-router.js';
import { readMultipartForm, type MultipartLimits } from '../multipart-form.js';
import { presentTarget } from '../../app/present/target.js';

const limits = (fileDescription: string): MultipartLimits => ({
  fileField: 'file',
  maxFileBytes: MAX_ATTACHMENT_BYTES,
  maxFields: 1,
  maxFieldBytes: 1024,
  fileDescription,
});

export const ATTACHMENT_OPERATIONS = ['uploadLoginRecording', 'uploadApiDefinition'];

async function readFilePart(context: OperationInput, fileDescription: string): Promise<{ fileName: string | undefined; content: Buffer }> {
  const chunks: Buffer[] = [];
  const form = await readMultipartForm(context.req, context.res, limits(fileDescription), {
    onField: (name) => {
      throw new InvalidRequestError(`send only the file part 'file'; '${name.slice(0, 40)}' is not a field of this upload`);
    },
    onFileChunk: (chunk) => chunks.push(chunk),
  });
  if (!form.hasFile)
    throw new InvalidRequestError(
      `a file part named 'file' is required (curl -F 'file=@${fileDescription === 'a login recording' ? 'login.side' : 'openapi.yaml'}')`,
    );
  return { fileName: form.fileName, content: Buffer.concat(chunks) };
}

export function targetAttachmentOperations(attachments: TargetAttachmentsService): Record<string, Operation> {
  return {
    uploadLoginRecording: async (context) => {
      attachments.assertOwned(context.principal.account, context.params.id!);
      const file = await readFilePart(context, 'a login recording');
      return { data: presentTarget(attachments.attachLoginRecording(context.principal.account, context.params.id!, file.fileName, file.content)) };
    },
    uploadApiDefinition: async (context) => {
      attachments.assertOwned(context.principal.account, context.params.id!);
      const file = await readFilePart(context, 'an API definition');
      return { data: presentTarget(await attachments.attachApiDefinition(context.principal.account, context.params.id!, file.fileName, file.content)) };
    },
  };
}
