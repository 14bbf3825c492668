import { expect } from 'chai';
import { InvalidRequestError, NotFoundError, MalformedResultError } from '../../src/domain/errors.js';

describe('typed errors', () => {
  it('carry the kind the HTTP edge maps to a status code', () => {
    expect(new InvalidRequestError('x').kind).to.equal('invalid');
    expect(new MalformedResultError('bad xml').kind).to.equal('invalid');
    expect(new NotFoundError('target', 'abc').kind).to.equal('not_found');
  });

  it('name the resource and id in not-found messages', () => {
    expect(new NotFoundError('target', 'abc').message).to.equal("No target with id 'abc' exists in this account.");
  });
});
