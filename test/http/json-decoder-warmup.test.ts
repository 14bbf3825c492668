import { expect } from 'chai';
import { createRequire } from 'node:module';
import iconv from 'iconv-lite';
import { TestService } from '../support/test-service.js';

/**
 * body-parser decodes JSON bodies through iconv-lite, which loads its table
 * of encodings on first use (bench/scans.ts: 5-20 ms that a burst's first
 * request, and all queued behind it, would wait). The HTTP app loads it when
 * it is built, before any request.
 */
describe('HTTP edge: the JSON body decoder is ready before the first request', () => {
  it('warms the iconv-lite instance that body-parser reads bodies with, and bodies still decode', async () => {
    const require = createRequire(import.meta.url);
    const bodyParserIconv = createRequire(require.resolve('raw-body'))('iconv-lite') as typeof iconv;
    expect(bodyParserIconv, 'raw-body and Vigil share one iconv-lite module').to.equal(iconv);

    const state = iconv as unknown as { encodings: unknown; _codecDataCache: Record<string, unknown> };
    state.encodings = null;
    for (const name of Object.keys(state._codecDataCache)) delete state._codecDataCache[name];

    const service = await TestService.start();
    try {
      expect(state.encodings, 'encodings loaded while the app was built').to.not.equal(null);
      expect(Object.keys(state._codecDataCache)).to.include('utf8');
      const response = await service.post('/v1/targets', { target: 'example.com', tags: ['café-✓'] });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(response.body.data.tags).to.deep.equal(['café-✓']);
    } finally {
      await service.stop();
    }
  });
});
