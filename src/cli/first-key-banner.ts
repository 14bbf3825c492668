/**
 * The first start's API key, framed so that it stands out between npm's and
 * the log's lines. Printed to stderr, outside the log stream, so that it
 * never lands in log storage.
 */
export function firstKeyBanner(apiKey: string, dashboardUrl: string): string {
  const lines = [
    "Vigil created the account 'default'. Its API key, shown only this once:",
    '',
    `    ${apiKey}`,
    '',
    'Store it now: Vigil keeps only a hash of it. Send it as the',
    `X-SERVICE-API-KEY header, or sign in with it at ${dashboardUrl}.`,
    'Lost it? Make another: vigil accounts create-key --account default',
  ];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = '─'.repeat(width + 2);
  return ['', `┌${rule}┐`, ...lines.map((line) => `│ ${line.padEnd(width)} │`), `└${rule}┘`, ''].join('\n') + '\n';
}
