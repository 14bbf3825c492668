/**
 * NamespaceSet: the namespaces bound to accounts, re-read only when the
 * store's version moved (checked every second on the injected timers), each
 * new namespace told once to every listener.
 */
import { expect } from 'chai';
import { NAMESPACE_CHECK_MS, NamespaceSet } from '../../src/runtime/kubernetes/namespace-set.js';
import { FakeTimers } from '../support/fake-timers.js';

describe('NamespaceSet', () => {
  it('re-reads the accounts only when the version moved, and tells each new namespace once', () => {
    const timers = new FakeTimers();
    const bound = ['vigil-acme'];
    let version = 1;
    let reads = 0;
    const errors: unknown[] = [];
    const set = new NamespaceSet({
      read: () => {
        reads += 1;
        return bound;
      },
      version: () => String(version),
      timers,
      onError: (error) => errors.push(error),
    });
    const added: string[] = [];
    set.onAdded((namespace) => added.push(namespace));
    set.start();
    expect(set.current()).to.deep.equal(['vigil-acme']);
    expect(added, 'the listeners hear of namespaces added after they registered').to.deep.equal(['vigil-acme']);

    timers.advance(10 * NAMESPACE_CHECK_MS);
    expect(reads, 'no re-read while the version stays').to.equal(1);

    bound.push('vigil-late');
    version += 1;
    timers.advance(NAMESPACE_CHECK_MS);
    expect(added).to.deep.equal(['vigil-acme', 'vigil-late']);
    expect(set.has('vigil-late')).to.equal(true);
    expect(reads).to.equal(2);
    set.stop();
    expect(timers.pending).to.equal(0);
    expect(errors).to.deep.equal([]);
  });

  it('reads again at the next check after a read that failed', () => {
    const timers = new FakeTimers();
    let failing = true;
    const errors: unknown[] = [];
    const version = () => {
      if (failing) throw new Error('database is locked');
      return '1';
    };
    const set = new NamespaceSet({ read: () => ['vigil-acme'], version, timers, onError: (error) => errors.push(error) });
    set.start();
    expect(set.current()).to.deep.equal([]);
    expect(errors.map((error) => (error as Error).message)).to.deep.equal(['database is locked']);
    failing = false;
    timers.advance(NAMESPACE_CHECK_MS);
    expect(set.current()).to.deep.equal(['vigil-acme']);
    set.stop();
  });
});
