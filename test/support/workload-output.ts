/** A workload output's bytes, whether held in memory or read from disk in pieces. */
import type { WorkloadOutput } from '../../src/app/ports.js';

export async function outputBytes(output: WorkloadOutput): Promise<Buffer> {
  if (output.content instanceof Uint8Array) return Buffer.from(output.content);
  const pieces: Uint8Array[] = [];
  for await (const piece of output.content()) pieces.push(piece);
  return Buffer.concat(pieces);
}
