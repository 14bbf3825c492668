/**
 * A service stand-in for test/runtime/spawner.test.ts: starts a long-running
 * program through a ScannerSpawner, prints the program's first output line
 * (its pid), then waits to be killed.
 *
 * Usage: node --import tsx test/support/spawner-parent.ts
 */
import { ScannerSpawner } from '../../src/runtime/embedded/spawner.js';

const spawner = new ScannerSpawner();
spawner.spawn('/bin/sh', ['-c', 'echo $$; exec sleep 300'], {
  cwd: process.cwd(),
  onLine: (line) => process.stdout.write(`${line}\n`),
  onError: () => undefined,
  onClose: () => undefined,
});
