/**
 * The README's shell blocks, in order: every fenced block whose info string
 * is `sh`. A block directly preceded by `<!-- readme-test: skip (why) -->`
 * is listed with that reason and not run (it needs a cluster, an outside
 * scanner, or is the two commands themselves).
 */
export interface ReadmeBlock {
  /** 1-based line of the opening fence, for messages. */
  line: number;
  code: string;
  skip?: string;
}

const SKIP_MARKER = /^<!--\s*readme-test:\s*skip\s*\((.+)\)\s*-->$/;

export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const fence = /^(```+|~~~+)\s*(\S*)/.exec(lines[index]!);
    if (fence === null) continue;
    const close = lines.findIndex((line, at) => at > index && line.startsWith(fence[1]!) && line.trim() === fence[1]);
    if (close < 0) throw new Error(`README line ${index + 1}: a code block is never closed`);
    if (fence[2] === 'sh') {
      const skip = SKIP_MARKER.exec(lines[index - 1]?.trim() ?? '')?.[1];
      blocks.push({ line: index + 1, code: lines.slice(index + 1, close).join('\n'), ...(skip === undefined ? {} : { skip }) });
    }
    index = close;
  }
  return blocks;
}

/**
 * The placeholders a person fills in from what Vigil printed: the first key
 * (`vgl_…`) and the signing secret `vigil webhooks add` printed (`whsec_…`).
 * Nothing else is rewritten: the blocks run as written.
 */
export function fillPlaceholders(code: string, values: { signingSecret?: string }): string {
  const filled = code.replaceAll('vgl_…', '"$FIRST_API_KEY"');
  return values.signingSecret === undefined ? filled : filled.replaceAll('whsec_…', values.signingSecret);
}
