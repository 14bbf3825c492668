/**
 * The Scans benchmark's client, in its own process so that it never shares
 * an event loop with the Vigil it measures: sends the POST /v1/scans requests
 * all at once and prints one JSON line with, per request, the epoch time
 * (ms, sub-ms precision) just before it was sent and its response time.
 *
 * Usage: node --import tsx bench/support/scan-client.ts <baseUrl> <apiKey> <count>
 */
const [baseUrl, apiKey, countArg] = process.argv.slice(2) as [string, string, string];
const count = Number(countArg);

interface Sent {
  id: string;
  index: number;
  sentEpochMs: number;
  responseMs: number;
}

async function postScan(index: number): Promise<Sent> {
  const body = JSON.stringify({ type: 'NMAP', targets: [`127.0.0.${index + 1}`] });
  const sentPerf = performance.now();
  const response = await fetch(`${baseUrl}/v1/scans`, { method: 'POST', headers: { 'X-SERVICE-API-KEY': apiKey, 'Content-Type': 'application/json' }, body });
  const text = await response.text();
  const responseMs = performance.now() - sentPerf;
  if (response.status !== 200) throw new Error(`POST /v1/scans #${index} answered ${response.status}: ${text.slice(0, 500)}`);
  const scan = (JSON.parse(text) as { data: { id: string; state: string } }).data;
  if (scan.state !== 'QUEUED') throw new Error(`POST /v1/scans #${index} answered a scan in state ${scan.state}, expected QUEUED`);
  return { id: scan.id, index, sentEpochMs: performance.timeOrigin + sentPerf, responseMs };
}

// Warm this process's fetch (undici) first, so its own start-up is not counted as Vigil's response time.
await fetch(`${baseUrl}/healthz`).then((response) => response.text());
const sent = await Promise.all(Array.from({ length: count }, (_, index) => postScan(index)));
process.stdout.write(`${JSON.stringify(sent)}\n`);
