/**
 * docs/configuration.md's table of environment variables, generated from the
 * settings module's table (src/config/setting-definitions.ts) between two
 * markers; the prose around them is written by hand and left as it is.
 * scripts/write-configuration-doc.ts writes it; test/unit/docs.test.ts fails
 * when the page drifts from the module.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTING_DEFINITIONS, type SettingDefinition } from '../src/config/setting-definitions.js';

export const CONFIGURATION_DOC = join(fileURLToPath(new URL('..', import.meta.url)), 'docs/configuration.md');
const BEGIN = '<!-- generated from src/config/setting-definitions.ts by scripts/write-configuration-doc.ts: edit there, not here -->';
const END = '<!-- end of the generated table -->';

const cell = (text: string): string => text.replace(/\|/g, '\\|');

function shownDefault(definition: SettingDefinition): string {
  if (definition.shownDefault !== undefined) return definition.shownDefault;
  return definition.fallback === undefined ? 'unset' : `\`${definition.fallback}\``;
}

function shownBound(bound: SettingDefinition['bound']): string {
  if (typeof bound === 'string') return bound;
  if ('min' in bound) return `a whole number from ${bound.min} to ${bound.max}`;
  return bound.map((word) => `\`${word}\``).join(', ');
}

/** The generated table, markers included. */
export function environmentTable(definitions: readonly SettingDefinition[] = SETTING_DEFINITIONS): string {
  const rows = definitions.map((definition) => `| \`${definition.name}\` | ${cell(shownDefault(definition))} | ${cell(shownBound(definition.bound))} | ${cell(definition.meaning)} |`);
  return [BEGIN, '', '| variable | default | accepts | meaning |', '|---|---|---|---|', ...rows, '', END].join('\n');
}

/** The page with its generated table replaced by the one the settings module gives; the prose around it stays. */
export function withEnvironmentTable(page: string, table: string = environmentTable()): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`docs/configuration.md has lost its markers: put the table between\n${BEGIN}\nand\n${END}`);
  return page.slice(0, begin) + table + page.slice(end + END.length);
}

export function expectedConfigurationDoc(): string {
  return withEnvironmentTable(readFileSync(CONFIGURATION_DOC, 'utf8'));
}
