/**
 * axe-core in a page the dashboard's CSP protects. The CSP refuses inline
 * scripts, as it should, so page.addScriptTag({ content }) is blocked; the
 * source is evaluated through the DevTools protocol instead (page.evaluate),
 * which the page's CSP does not govern. Production headers stay as they are.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** The page's serious and critical accessibility violations, one line each (rule, help, elements). */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] }).then((results) => results.violations)')) as AxeViolation[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}
