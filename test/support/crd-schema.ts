/**
 * Checks shared by the custom resource definition tests: loading a CRD and
 * its samples, whether its schema is structural, and whether it says the
 * same as the zod schema the embedded runtime validates with.
 */
import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export type Schema = Record<string, any>;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The CRD in crds/<file>, its one version, and that version's schema. */
export function loadCrd(file: string) {
  const crd = parse(readFileSync(join(ROOT, 'crds', file), 'utf8')) as Schema;
  const version = crd.spec.versions[0] as Schema;
  return { crd, version, crdSchema: version.schema.openAPIV3Schema as Schema };
}

/** Every manifest of this kind in config/samples, named <file>#<document index>. */
export function samplesOfKind(kind: string): Array<{ name: string; manifest: Schema }> {
  const dir = join(ROOT, 'config/samples');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((name) =>
      parseAllDocuments(readFileSync(join(dir, name), 'utf8')).map((document, index) => ({
        name: `${name}#${index}`,
        manifest: document.toJS() as Schema,
      })),
    )
    .filter(({ manifest }) => manifest?.kind === kind);
}

/** Every node of a schema with its path, depth first. */
function* nodes(schema: Schema, path = ''): Generator<{ path: string; node: Schema }> {
  yield { path: path || '.', node: schema };
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) yield* nodes(child, `${path}.${key}`);
  if (schema.items) yield* nodes(schema.items as Schema, `${path}[]`);
}

function withoutKubernetesExtensions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutKubernetesExtensions);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !key.startsWith('x-kubernetes-'))
      .map(([key, child]) => [key, withoutKubernetesExtensions(child)]),
  );
}

/** An ajv validator of the CRD's schema, as the API server would apply it (its x-kubernetes extensions aside). */
export function crdValidator(crdSchema: Schema) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(withoutKubernetesExtensions(crdSchema) as object);
}

/** Why the schema is not structural: every node typed, objects saying what they hold, arrays with items, no combinators. */
export function structuralProblems(crdSchema: Schema, extraForbidden: readonly string[] = []): string[] {
  const problems: string[] = [];
  for (const { path, node } of nodes(crdSchema)) {
    if (typeof node.type !== 'string') problems.push(`${path} has no type`);
    if (node.type === 'object' && path !== '.metadata') {
      const describes = 'properties' in node || 'additionalProperties' in node || node['x-kubernetes-preserve-unknown-fields'] === true;
      if (!describes) problems.push(`${path} is an object without properties`);
    }
    if (node.type === 'array' && node.items === undefined) problems.push(`${path} is an array without items`);
    for (const forbidden of ['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'uniqueItems', ...extraForbidden]) {
      if (forbidden in node) problems.push(`${path} uses ${forbidden}`);
    }
  }
  return problems;
}

/** Where the CRD and the zod schema (as JSON Schema) disagree on field names, required fields, types, enums and bounds. */
export function zodDriftProblems(crdSchema: Schema, zodSchema: Schema): string[] {
  const problems: string[] = [];
  const COMPARED = ['type', 'enum', 'format', 'pattern', 'minItems', 'maxItems', 'minLength', 'maxLength', 'minimum', 'maximum'] as const;
  const SAFE_INTEGER = 9007199254740991;
  const walk = (fromCrd: Schema, fromZod: Schema, path: string): void => {
    for (const keyword of COMPARED) {
      const a = fromCrd[keyword];
      let b = fromZod[keyword];
      if ((keyword === 'minimum' || keyword === 'maximum') && Math.abs(b) === SAFE_INTEGER) b = undefined;
      // zod spells its date-time and e-mail formats out as patterns too; the CRD names the format.
      if (keyword === 'pattern' && (fromZod.format === 'date-time' || fromZod.format === 'email')) b = undefined;
      if (keyword === 'pattern' && typeof b === 'string') b = b.replaceAll('\\/', '/');
      if (keyword === 'format' && a === 'int64') continue;
      if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`${path} ${keyword}: CRD ${JSON.stringify(a)}, zod ${JSON.stringify(b)}`);
    }
    if (fromCrd.properties) {
      const crdKeys = Object.keys(fromCrd.properties).sort();
      const zodKeys = Object.keys(fromZod.properties ?? {}).sort();
      if (JSON.stringify(crdKeys) !== JSON.stringify(zodKeys)) problems.push(`${path} fields: CRD ${crdKeys}, zod ${zodKeys}`);
      if (path !== '') {
        const crdRequired = [...(fromCrd.required ?? [])].sort();
        const zodRequired = [...(fromZod.required ?? [])].sort();
        if (JSON.stringify(crdRequired) !== JSON.stringify(zodRequired)) problems.push(`${path} required: CRD ${crdRequired}, zod ${zodRequired}`);
      }
      for (const key of crdKeys) {
        if (fromZod.properties?.[key] && key !== 'metadata') walk(fromCrd.properties[key], fromZod.properties[key], `${path}.${key}`);
      }
    }
    if (fromCrd.items) walk(fromCrd.items, fromZod.items ?? {}, `${path}[]`);
  };
  walk(crdSchema, zodSchema, '');
  return problems;
}

/** The messages with which a zod schema refuses the input; fails the test when it accepts it. */
export function refusalMessages(
  schema: { safeParse(input: unknown): { success: true } | { success: false; error: { issues: Array<{ message: string }> } } },
  input: unknown,
): string[] {
  const result = schema.safeParse(input);
  expect(result.success, `expected ${JSON.stringify(input)} to be refused`).to.equal(false);
  return result.success ? [] : result.error.issues.map((issue) => issue.message);
}
