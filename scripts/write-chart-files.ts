/** Writes the chart's generated files (scripts/chart-files.ts): `make chart-files`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectedChartFiles, ROOT } from './chart-files.js';

for (const [path, content] of expectedChartFiles()) {
  writeFileSync(join(ROOT, path), content);
  console.log(`wrote ${path}`);
}
