/**
 * Starts a module as a worker thread, compiled or under tsx (tests,
 * development). Worker threads do not inherit tsx's loader: under tsx the
 * worker registers it first, then loads the .ts module.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The module `name` beside `base` (an import.meta.url): .ts under tsx, .js compiled. */
export function siblingModule(name: string, base: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

export function startWorker(module: URL, options: WorkerOptions): Worker {
  if (!module.pathname.endsWith('.ts')) return new Worker(module, options);
  // tsx's ESM entry of its API, found through its package exports (the CommonJS one cannot register in a worker).
  const manifest = createRequire(module).resolve('tsx/package.json');
  const entry = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import
    .default;
  const tsx = pathToFileURL(join(dirname(manifest), entry)).href;
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(module.href)}); })`;
  return new Worker(code, { ...options, eval: true });
}
