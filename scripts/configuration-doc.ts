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
import { markersFor, withGeneratedBlock } from './generated-block.js';

export const CONFIGURATION_DOC = join(fileURLToPath(new URL('..', import.meta.url)), 'docs/configuration.md');
const CONFIGURATION_MARKERS = markersFor('src/config/setting-definitions.ts', 'scripts/write-configuration-doc.ts');

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

/** The table of variables, one row each, in the order of the settings table. */
export function environmentTable(definitions: readonly SettingDefinition[] = SETTING_DEFINITIONS): string {
  const rows = definitions.map(
    (definition) => `| \`${definition.name}\` | ${cell(shownDefault(definition))} | ${cell(shownBound(definition.bound))} | ${cell(definition.meaning)} |`,
  );
  return ['| variable | default | accepts | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export function expectedConfigurationDoc(): string {
  return withGeneratedBlock(readFileSync(CONFIGURATION_DOC, 'utf8'), CONFIGURATION_MARKERS, environmentTable());
}
