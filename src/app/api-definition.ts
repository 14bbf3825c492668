/**
 * An uploaded API definition (SPEC.md, Upload an API definition): OpenAPI
 * 2.0 or 3.x, JSON or YAML, checked with @readme/openapi-parser before it is
 * stored, so that ZAP's openapi job never meets a file it cannot import.
 *
 * Nothing is fetched: a `$ref` that points outside the document (a URL or
 * another file) is refused before the parser sees the document, and the
 * parser runs with external and file resolution off. YAML is read with an
 * alias budget (no "billion laughs"), nesting is bounded, and dereferencing
 * has a time limit.
 */
import { validate } from '@readme/openapi-parser';
import { parse as parseYaml } from 'yaml';
import { InvalidRequestError } from '../domain/errors.js';

const MAX_NESTING = 64;
const MAX_YAML_ALIASES = 100;
const DEREFERENCE_TIMEOUT_MS = 5000;

export interface ApiDefinitionSummary {
  /** `OpenAPI 3.0.3`, `Swagger 2.0`. */
  version: string;
  /** JSON or YAML: the file ZAP imports keeps its format. */
  format: 'json' | 'yaml';
}

/** The check itself, in the calling thread; checkApiDefinition runs it in a worker (api-definition-check.ts). */
export async function checkApiDefinitionHere(fileName: string, content: Buffer): Promise<ApiDefinitionSummary> {
  if (!/\.(json|ya?ml)$/i.test(fileName)) {
    throw new InvalidRequestError(`the API definition's file name must end in .json, .yaml or .yml, not '${fileName.slice(0, 80)}'`);
  }
  const text = utf8(content);
  const format = /^\s*[{[]/.test(text) ? 'json' : 'yaml';
  const document = format === 'json' ? parseJson(text) : parseYamlText(text);
  const version = versionOf(document);
  refuseExternalRefs(document, '#', 0);
  let result;
  try {
    result = await validate(structuredClone(document) as never, {
      resolve: { external: false, file: false },
      dereference: { circular: 'ignore' },
      timeoutMs: DEREFERENCE_TIMEOUT_MS,
    });
  } catch (error) {
    throw new InvalidRequestError(`the API definition is not valid ${version}: ${oneLine((error as Error).message)}`);
  }
  if (!result.valid) {
    const first = result.errors[0]?.message ?? 'it does not follow the specification';
    throw new InvalidRequestError(`the API definition is not valid ${version}: ${oneLine(first)}`);
  }
  return { version, format };
}

function utf8(content: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    throw new InvalidRequestError('the API definition is not UTF-8 text; save it as UTF-8 JSON or YAML');
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequestError(`the API definition is not valid JSON (${oneLine((error as Error).message)})`);
  }
}

function parseYamlText(text: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES, prettyErrors: false });
  } catch (error) {
    throw new InvalidRequestError(`the API definition is neither JSON nor valid YAML (${oneLine((error as Error).message)})`);
  }
}

function versionOf(document: unknown): string {
  const record = (typeof document === 'object' && document !== null && !Array.isArray(document) ? document : {}) as Record<string, unknown>;
  if (typeof record.openapi === 'string' && /^3\.\d+(\.\d+)?$/.test(record.openapi)) return `OpenAPI ${record.openapi}`;
  if (record.swagger === '2.0') return 'Swagger 2.0';
  throw new InvalidRequestError('the file is not an OpenAPI definition: it needs a top-level "openapi: 3.x" or "swagger: \'2.0\'" field');
}

/** Only references within the document (`#/...`) are followed; any other would make Vigil fetch a URL or read a file. */
function refuseExternalRefs(node: unknown, path: string, depth: number): void {
  if (typeof node !== 'object' || node === null) return;
  if (depth > MAX_NESTING) throw new InvalidRequestError(`the API definition nests deeper than ${MAX_NESTING} levels at ${path.slice(0, 200)}`);
  for (const [key, child] of Object.entries(node)) {
    const at = `${path}/${key}`;
    if (key === '$ref' && (typeof child !== 'string' || !child.startsWith('#'))) {
      throw new InvalidRequestError(
        `the API definition has an external $ref ${JSON.stringify(child).slice(0, 120)} at ${at.slice(0, 200)}; Vigil fetches nothing: bundle the definition into one file (for example with 'npx @redocly/cli bundle') and upload that`,
      );
    }
    refuseExternalRefs(child, at, depth + 1);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
