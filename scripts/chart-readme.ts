/**
 * charts/vigil/README.md, generated from the chart's values.yaml: one row per
 * value with its default and the comment written above it. A value is a row
 * (a leaf) unless it is a block-style map whose schema names its fields, in
 * which case its fields are rows; so `jobs.podAnnotations` (a map of strings)
 * is one row and `jobs.networkPolicy` is four. `make chart-files` writes it;
 * test/chart fails when it drifts or when a value has no comment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isScalar, parseDocument, type Pair, type YAMLMap } from 'yaml';

export interface ValueRow {
  key: string;
  default: string;
  description: string;
  /** A heading row: the comment above a map whose fields follow as rows of their own. */
  group?: boolean;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
}

const escapeCell = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '&#124;');

/**
 * A comment as one table cell: prose lines joined into one paragraph,
 * indented lines (`#   - name: vigil-acme`, the examples) kept as lines of code.
 */
function commentText(comment: string | null | undefined): string {
  if (!comment) return '';
  const parts: string[] = [];
  for (const line of comment.split('\n')) {
    const example = /^ {3,}\S/.test(line);
    if (example) parts.push(`<br><code>${escapeCell(line.slice(3)).replace(/^ +/, (spaces) => '&nbsp;'.repeat(spaces.length))}</code>`);
    else if (line.trim() !== '') parts.push(`${parts.length > 0 ? ' ' : ''}${escapeCell(line.trim())}`);
  }
  return parts.join('').trim();
}

function defaultText(pair: Pair): string {
  const value = pair.value;
  if (isScalar(value)) return value.value === '' ? '`""`' : `\`${String(value.value)}\``;
  return `\`${JSON.stringify((value as { toJSON(): unknown }).toJSON())}\``;
}

/** A map's first key keeps its comment on the map when it follows the parent's key line. */
function pairComment(map: YAMLMap, index: number, pair: Pair): string | null | undefined {
  const own = (pair.key as { commentBefore?: string | null }).commentBefore;
  return own || (index === 0 ? map.commentBefore : undefined);
}

function rowsOf(map: YAMLMap, schema: SchemaNode | undefined, prefix: string, rows: ValueRow[]): void {
  map.items.forEach((pair, index) => {
    const name = String((pair.key as { value: unknown }).value);
    const key = `${prefix}${name}`;
    const child = schema?.properties?.[name];
    const value = pair.value;
    if (isMap(value) && !value.flow && value.items.length > 0 && child?.properties !== undefined) {
      // A group's own comment heads its rows; its fields still need comments of their own.
      const group = commentText((pair.key as { commentBefore?: string | null }).commentBefore);
      if (group !== '') rows.push({ key, default: '', description: group, group: true });
      rowsOf(value, child, `${key}.`, rows);
      return;
    }
    rows.push({ key, default: defaultText(pair as Pair), description: commentText(pairComment(map, index, pair as Pair)) });
  });
}

/** Every value of values.yaml with its default and description, in file order. */
export function chartValueRows(chartDir: string): ValueRow[] {
  const document = parseDocument(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
  const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as SchemaNode;
  const rows: ValueRow[] = [];
  const top = document.contents as YAMLMap;
  // The file's own header reaches the parser as the first key's comment: only its last paragraph is about `image`.
  const firstKey = top.items[0]?.key as { commentBefore?: string | null } | undefined;
  if (firstKey?.commentBefore) firstKey.commentBefore = firstKey.commentBefore.split(/\n[ \t]*\n/).pop();
  rowsOf(top, schema, '', rows);
  return rows;
}

const INTRO = `# The Vigil Helm chart

Generated from \`values.yaml\` by \`make chart-files\` (scripts/chart-readme.ts): do not edit; change the comments in \`values.yaml\`.

Vigil is a self-hosted vulnerability scanning service and Kubernetes operator. This chart installs \`vigil serve\` (the API, the dashboard, the controller and the result collector in one pod, on SQLite), its CRDs, the RBAC it needs in its tenant namespaces and, by default, a NetworkPolicy fencing scanner pods in each.

\`\`\`sh
helm install vigil charts/vigil --namespace vigil --create-namespace -f vigil-values.yaml
\`\`\`

The repository's README walks the install, the first account and the first Scan ("Install on Kubernetes"), and says why each permission is there ("Permissions"), which Pod Security level each scan type needs ("Pod Security"), how scanner pods are fenced in ("Fencing scanner pods") and how to back up and restore Vigil's record.

\`values.schema.json\` refuses any key not listed here, at every level.

## Values

| Key | Default | Description |
|---|---|---|
`;

export function chartReadme(chartDir: string): string {
  const rows = chartValueRows(chartDir).map((row) =>
    row.group ? `| **\`${row.key}\`** | | ${row.description} |` : `| \`${row.key}\` | ${row.default} | ${row.description} |`,
  );
  return `${INTRO}${rows.join('\n')}\n`;
}
