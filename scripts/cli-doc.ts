/**
 * docs/cli.md's reference of the `vigil` command, generated from the
 * commander program (src/cli/program.ts): each command with its usage line,
 * description, arguments and options, as `--help` prints them. The page's
 * prose around the generated block is written by hand.
 * scripts/write-cli-doc.ts writes it; test/unit/docs.test.ts fails when the
 * page drifts from the program.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/program.js';
import { markersFor, withGeneratedBlock } from './generated-block.js';

export const CLI_DOC = join(fileURLToPath(new URL('..', import.meta.url)), 'docs/cli.md');
const CLI_MARKERS = markersFor('src/cli/program.ts', 'scripts/write-cli-doc.ts');

/** A table cell of prose: a pipe would end the cell, and `<name>` would read as an HTML tag. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/</g, '&lt;');
/** A table cell of code: only the pipe needs escaping (GitHub's tables split on it even inside backticks). */
const codeCell = (text: string): string => `\`${text.replace(/\|/g, '\\|')}\``;

function fullName(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

function commandSection(command: Command): string {
  const help = command.createHelp();
  const rows = [
    ...help.visibleArguments(command).map((argument) => `| ${codeCell(help.argumentTerm(argument))} | ${cell(help.argumentDescription(argument))} |`),
    ...help.visibleOptions(command).map((option) => {
      const required = option.mandatory ? ' (required)' : '';
      return `| ${codeCell(help.optionTerm(option))} | ${cell(help.optionDescription(option))}${required} |`;
    }),
  ];
  const lines = [`### \`${fullName(command)}\``, '', cell(command.description()), '', '```text', `${fullName(command)} ${command.usage()}`, '```'];
  if (rows.length > 0) lines.push('', '| argument or option | meaning |', '|---|---|', ...rows);
  return lines.join('\n');
}

/** The program and every command under it, depth first, in the order `vigil --help` lists them. */
function commandsOf(command: Command): Command[] {
  return [command, ...command.commands.flatMap(commandsOf)];
}

/** Every command's section, the program's own first. */
export function cliReference(program: Command = buildProgram({ stdout: () => {}, stderr: () => {} }, () => {})): string {
  return commandsOf(program).map(commandSection).join('\n\n');
}

export function expectedCliDoc(): string {
  return withGeneratedBlock(readFileSync(CLI_DOC, 'utf8'), CLI_MARKERS, cliReference());
}
