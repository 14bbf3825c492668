/**
 * `vigil serve` compiles the API's request validators after start-up, one
 * operation per turn of the event loop, so that no operation's first request
 * holds the loop for its compile (16-54 ms each) and start-up stays quick.
 */
import { expect } from 'chai';
import type { OpenAPIBackend } from 'openapi-backend';
import { compileOneByOne } from '../../src/http/api-router.js';

describe('request validators compiled in the background', () => {
  it('compiles every operation named, each in a turn of its own', async () => {
    let turn = 0;
    const compiled: Array<[string, number]> = [];
    const api = { validator: { getRequestValidatorsForOperation: (id: string) => compiled.push([id, turn]) } } as unknown as Pick<OpenAPIBackend, 'validator'>;
    compileOneByOne(api, ['listRisks', 'getRisk', 'createReport']);
    expect(compiled, 'nothing compiled in the turn that asked').to.deep.equal([]);
    for (let n = 0; n < 5; n++) {
      await new Promise((resolve) => setImmediate(resolve));
      turn++;
    }
    expect(compiled.map(([id]) => id)).to.deep.equal(['listRisks', 'getRisk', 'createReport']);
    expect(new Set(compiled.map(([, at]) => at)).size, 'turns').to.equal(3);
  });
});
