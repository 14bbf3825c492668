/** Writes the OpenAPI document generated from the zod schemas to src/api/openapi.json (`make openapi`). */
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../src/api/openapi.js';

export const OPENAPI_FILE = new URL('../src/api/openapi.json', import.meta.url);

writeFileSync(OPENAPI_FILE, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${OPENAPI_FILE.pathname}`);
