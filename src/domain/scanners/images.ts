/**
 * Scanner images, each pinned to a release: an unpinned tag would change the
 * scanner, its output format and so the risk fingerprints under a running
 * service. Bump them deliberately, with the parser fixtures.
 */

/** Vigil's own version; test/unit/scanner-definitions.test.ts keeps it equal to package.json's. */
export const VIGIL_VERSION = '0.1.0';

/**
 * Where Vigil's own image is published. The one place its name is written in
 * code; the Makefile's `image` target, the chart's values and Chart.yaml's
 * appVersion are checked against it and VIGIL_VERSION by test/chart.
 */
export const VIGIL_IMAGE_REPOSITORY = 'ghcr.io/vigil-dev/vigil';
/** The nuclei-templates release baked into the nuclei image (images/nuclei/Dockerfile builds it). */
export const NUCLEI_TEMPLATES_VERSION = 'v10.4.9';
/** Where that image keeps them. */
export const NUCLEI_IMAGE_TEMPLATES = '/opt/nuclei-templates';

export const SCANNER_IMAGES = {
  nmap: 'instrumentisto/nmap:7.95',
  /** projectdiscovery/nuclei:v3.11.1 plus nuclei-templates at NUCLEI_TEMPLATES_VERSION: the upstream image has no templates. */
  nuclei: `ghcr.io/vigil-dev/vigil-nuclei:v3.11.1-templates-${NUCLEI_TEMPLATES_VERSION}`,
  sslyze: 'nablac0d3/sslyze:6.1.0',
  zap: 'ghcr.io/zaproxy/zaproxy:2.16.1',
  /** OPENVAS and NESSUS run through Vigil's own CLI, which drives the scanner's API. */
  vigil: `${VIGIL_IMAGE_REPOSITORY}:${VIGIL_VERSION}`,
} as const;
