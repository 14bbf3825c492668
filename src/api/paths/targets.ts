import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ListQuery, dataEnvelope, listEnvelope } from '../schemas/common.js';
import { Target, TargetCreate, TargetUpdate } from '../schemas/targets.js';
import { BODY_ERRORS, Deleted, IdParam, STANDARD_ERRORS, json, jsonBody } from './common.js';
import { ErrorBody } from '../schemas/common.js';

const AttachmentForm = (id: string, description: string) => z.object({ file: z.string().meta({ format: 'binary', description }) }).meta({ id });

const TargetResponse = dataEnvelope(Target).meta({ id: 'TargetResponse' });

const TargetListQuery = ListQuery.extend({
  sort: z.string().optional().meta({
    description:
      'One or more comma-separated fields, each optionally followed by a space and asc or desc (default asc): label, target, created_at, last_scanned. Without sort, newest first. Targets never scanned sort as earliest for last_scanned.',
    example: 'last_scanned desc,label asc',
  }),
}).meta({ description: 'filters keys: tags (any of the tags), label (exact labels), target (exact addresses).' });

export function registerTargetPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/targets',
    operationId: 'createTarget',
    tags: ['Targets'],
    summary: 'Create a target',
    description:
      'Validates the target: a public IPv4 address, a fully qualified domain name, or an http(s) URL whose host is one of those. Private and reserved IPv4 ranges (the IANA special-purpose registry and multicast), IPv6, CIDR ranges, other schemes, URLs with credentials and names under .localhost, .local, .internal, .home.arpa and .onion give 400. Creating a target that exists gives 400 unless upsert=true, which updates it with the sent label, tags and scanner_settings and returns it.',
    request: {
      query: z.object({
        upsert: z
          .enum(['true', 'false'])
          .optional()
          .meta({ description: 'When true, an existing target with the same address is updated and returned instead of giving 400.' }),
      }),
      body: jsonBody(TargetCreate),
    },
    responses: { 200: json(TargetResponse, 'The created (or, with upsert, updated) target.'), ...BODY_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/targets',
    operationId: 'listTargets',
    tags: ['Targets'],
    summary: 'List targets',
    request: { query: TargetListQuery },
    responses: { 200: json(listEnvelope(Target).meta({ id: 'TargetList' }), 'A page of targets.'), ...STANDARD_ERRORS },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/targets/{id}',
    operationId: 'getTarget',
    tags: ['Targets'],
    summary: 'Get a target',
    request: { params: IdParam },
    responses: { 200: json(TargetResponse, 'The target.'), ...STANDARD_ERRORS },
  });
  for (const method of ['put', 'patch'] as const) {
    registry.registerPath({
      method,
      path: '/v1/targets/{id}',
      operationId: method === 'put' ? 'updateTarget' : 'patchTarget',
      tags: ['Targets'],
      summary: method === 'put' ? 'Update a target' : 'Update a target (same as PUT)',
      description:
        'Omitted fields keep their values; the address cannot change. An empty tags array removes all tags. Sending any crawl setting replaces all seven crawl settings; headers and cookies are each replaced only when sent. Targets imported from a cloud provider keep its label and tags. Targets created from uploaded scan results give 400.',
      request: { params: IdParam, body: jsonBody(TargetUpdate) },
      responses: { 200: json(TargetResponse, 'The updated target.'), ...BODY_ERRORS },
    });
  }
  registry.registerPath({
    method: 'post',
    path: '/v1/targets/{id}/auth/selenium',
    operationId: 'uploadLoginRecording',
    tags: ['Targets'],
    summary: 'Attach a login recording',
    description:
      'Attaches a Selenium IDE project (.side, format version 2.0 or 3.0) whose first test with commands logs in to the target. It is replayed in a headless browser at the start of each OWASP_ZAP and OWASP_ZAP_ACTIVE scan of the target (unless the scan is started with use_authentication: false), and the session it ends with is handed to ZAP. Uploading again replaces the recording. A file name not ending in .side, a file over 1 MiB, no file or a second one, text fields, JSON that is not a Selenium IDE project or one without a test with commands give 400 and change nothing.',
    request: {
      params: IdParam,
      body: {
        required: true,
        content: {
          'multipart/form-data': { schema: AttachmentForm('LoginRecordingForm', 'Exactly one file part whose file name ends in .side, at most 1 MiB.') },
        },
      },
    },
    responses: {
      200: json(TargetResponse, 'The target, with auth_selenium_file set.'),
      ...STANDARD_ERRORS,
      400: json(ErrorBody, 'Not a Selenium IDE project, over 1 MiB, no file or more than one, or a malformed multipart body; error says which.'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/targets/{id}/openapi',
    operationId: 'uploadApiDefinition',
    tags: ['Targets'],
    summary: 'Upload an API definition',
    description:
      "Attaches an OpenAPI 2.0 (Swagger) or 3.x definition in JSON or YAML (file name ending in .json, .yaml or .yml), checked with an OpenAPI parser. OWASP_ZAP and OWASP_ZAP_ACTIVE scans of the target import it with ZAP's openapi job against the target's URL, so every operation is scanned. Uploading again replaces it. External $refs (other files or URLs) are refused: Vigil fetches nothing. Invalid definitions, a file over 1 MiB, no file or a second one give 400 and change nothing.",
    request: {
      params: IdParam,
      body: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: AttachmentForm('ApiDefinitionForm', 'Exactly one file part: an OpenAPI 2.0 or 3.x definition in JSON or YAML, at most 1 MiB.'),
          },
        },
      },
    },
    responses: {
      200: json(TargetResponse, 'The target, with openapi_file set.'),
      ...STANDARD_ERRORS,
      400: json(
        ErrorBody,
        'Not a valid OpenAPI definition, an external $ref, over 1 MiB, no file or more than one, or a malformed multipart body; error says which.',
      ),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/targets/{id}',
    operationId: 'deleteTarget',
    tags: ['Targets'],
    summary: 'Delete a target',
    description:
      'Also deletes the risks of the target and removes it from scheduled scans that select it by id; scans that already ran are kept. Only MANUAL and INTERNAL_SCANNER targets can be deleted; others give 400.',
    request: { params: IdParam },
    responses: { 200: json(Deleted, 'The target was deleted.'), ...STANDARD_ERRORS },
  });
}
