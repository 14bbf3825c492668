/**
 * The README and docs/ as a reader meets them: a README short enough to read
 * on the first day, no wall of prose, links that lead somewhere, and no
 * mention of files the repository does not hold.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentTable, expectedConfigurationDoc } from '../../scripts/configuration-doc.js';
import { cliReference, expectedCliDoc } from '../../scripts/cli-doc.js';
import { fencedBlock, markersFor, withGeneratedBlock } from '../../scripts/generated-block.js';
import { SETTING_DEFINITIONS } from '../../src/config/setting-definitions.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const MAX_README_WORDS = 4000;
const MAX_PARAGRAPH_CHARS = 1200;

function read(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

/** The markdown without fenced code blocks, so code never counts as prose or links. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** Prose paragraphs: blank-line separated blocks that are not tables, headings or code. */
export function proseParagraphs(markdown: string): string[] {
  return withoutCode(markdown)
    .split(/\n\s*\n/)
    .flatMap((block) => block.split(/\n(?=\s*(?:[-*]|\d+\.) )/))
    .map((block) => block.trim())
    .filter((block) => block.length > 0 && !block.startsWith('|') && !block.startsWith('#'));
}

/** GitHub's anchor for a heading. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  return new Set([...withoutCode(markdown).matchAll(/^#+ (.*)$/gm)].map((match) => anchorOf(match[1]!)));
}

function relativeLinks(markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('the README and docs/', () => {
  it(`the README has at most ${MAX_README_WORDS} words`, () => {
    expect(read('README.md').split(/\s+/).filter(Boolean).length).to.be.at.most(MAX_README_WORDS);
  });

  for (const page of PAGES) {
    it(`${page}: no prose paragraph over ${MAX_PARAGRAPH_CHARS} characters`, () => {
      const long = proseParagraphs(read(page)).filter((paragraph) => paragraph.length > MAX_PARAGRAPH_CHARS);
      expect(long.map((paragraph) => `${paragraph.length}: ${paragraph.slice(0, 80)}…`)).to.deep.equal([]);
    });

    it(`${page}: every relative link and anchor resolves`, () => {
      const broken = relativeLinks(read(page)).filter((link) => {
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file === '' ? page : join(dirname(page), file);
        if (!existsSync(join(ROOT, target))) return true;
        return anchor !== undefined && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor);
      });
      expect(broken).to.deep.equal([]);
    });

    it(`${page}: names no file the repository does not hold`, () => {
      expect(read(page)).not.to.match(/\b(SPEC|DESIGN|CONTRACT)\.md\b/);
    });
  }

  it('the anchor and paragraph helpers see what a reader sees', () => {
    expect(anchorOf('Running against a cluster (`VIGIL_RUNTIME=kubernetes`)')).to.equal('running-against-a-cluster-vigil_runtimekubernetes');
    expect(proseParagraphs('# H\n\none\ntwo\n\n| a | b |\n\n```sh\ncode\n```\n\n- item\n- other')).to.deep.equal(['one\ntwo', '- item', '- other']);
  });
});

describe('docs/configuration.md', () => {
  it('has the table of environment variables the settings module gives (npx tsx scripts/write-configuration-doc.ts writes it)', () => {
    expect(read('docs/configuration.md')).to.equal(expectedConfigurationDoc());
  });

  it('the settings table names every variable the settings module reads, once', () => {
    const settings = read('src/config/settings.ts');
    const variables = [...new Set([...settings.matchAll(/\b(VIGIL_[A-Z0-9_]*[A-Z0-9]|LOG_LEVEL)\b/g)].map((match) => match[1]!))];
    const names = SETTING_DEFINITIONS.map((definition) => definition.name);
    expect(variables.filter((name) => !names.includes(name))).to.deep.equal([]);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('shows each variable with its default, what it accepts and its meaning', () => {
    expect(environmentTable([{ name: 'VIGIL_X', fallback: '1', bound: { min: 0, max: 9 }, meaning: 'a | b' }])).to.include(
      '| `VIGIL_X` | `1` | a whole number from 0 to 9 | a \\| b |',
    );
    expect(environmentTable([{ name: 'VIGIL_Y', bound: ['on', 'off'], meaning: 'y' }])).to.include('| `VIGIL_Y` | unset | `on`, `off` | y |');
  });
});

describe('docs/cli.md', () => {
  it('has the command reference the commander program gives (npx tsx scripts/write-cli-doc.ts writes it)', () => {
    expect(read('docs/cli.md')).to.equal(expectedCliDoc());
  });

  it('lists every command and subcommand with its options, required ones marked', () => {
    const reference = cliReference();
    for (const command of [
      'vigil serve',
      'vigil backup',
      'vigil accounts create',
      'vigil accounts create-key',
      'vigil webhooks remove',
      'vigil login-replay',
    ]) {
      expect(reference).to.include(`### \`${command}\``);
    }
    expect(reference).to.include('| `--account <id\\|name>` | the account id or name (required) |');
    expect(reference).to.include('| `--plan <plan>` | the plan (choices: "free", "paid", default: "free") |');
  });
});

describe('a generated block in a page written by hand', () => {
  const markers = markersFor('src/x.ts', 'scripts/write-x.ts');

  it('replaces only what lies between the markers', () => {
    const page = `intro\n\n${fencedBlock(markers, 'old')}\n\noutro\n`;
    expect(withGeneratedBlock(page, markers, 'new')).to.equal(`intro\n\n${markers.begin}\n\nnew\n\n${markers.end}\n\noutro\n`);
  });

  it('says where the block goes when the markers are gone', () => {
    expect(() => withGeneratedBlock('intro only', markers, 'new')).to.throw(/lost its markers/);
  });
});
