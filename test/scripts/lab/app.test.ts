import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { BUILD_INPUTS, ensureLabApp, inputsHash, INSTALL_INPUTS, isStale, STAMPS } from '../../../scripts/lab/app';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-app-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the lab app steps run only when their inputs changed', () => {
  it('hashes names and contents, so renaming or editing a file changes the hash', () => {
    fs.writeFileSync(path.join(tmp, 'a'), 'x');
    fs.writeFileSync(path.join(tmp, 'b'), 'x');
    const a = inputsHash(tmp, ['a']);
    assert.notEqual(a, inputsHash(tmp, ['b']));
    assert.equal(a, inputsHash(tmp, ['a']));
    fs.writeFileSync(path.join(tmp, 'a'), 'y');
    assert.notEqual(a, inputsHash(tmp, ['a']));
    // A missing file hashes like an empty one, so it cannot crash the check.
    assert.equal(inputsHash(tmp, ['missing']), inputsHash(tmp, ['missing']));
  });

  it('is stale without a stamp, fresh with a matching one, stale again after an edit', () => {
    fs.writeFileSync(path.join(tmp, 'index.js'), 'one');
    assert.ok(isStale(tmp, 'stamp', ['index.js']));
    fs.writeFileSync(path.join(tmp, 'stamp'), inputsHash(tmp, ['index.js']) + '\n');
    assert.ok(!isStale(tmp, 'stamp', ['index.js']));
    fs.writeFileSync(path.join(tmp, 'index.js'), 'two');
    assert.ok(isStale(tmp, 'stamp', ['index.js']));
  });

  it('covers the lockfile and every source of the build', () => {
    assert.ok(INSTALL_INPUTS.includes('package-lock.json'));
    const lab = path.resolve(__dirname, '..', '..', '..', 'lab');
    const sources = fs.readdirSync(lab).filter((f) => f.endsWith('.js'));
    assert.deepEqual(sources.filter((f) => !BUILD_INPUTS.includes(f)), [], 'a .js file of lab/ that a change would not rebuild');
    assert.notEqual(STAMPS.install, STAMPS.build);
  });

  it('refuses a folder that is not the lab app, naming it', () => {
    assert.throws(() => ensureLabApp({ dir: tmp, stdio: 'pipe' }), /lab: no package-lock.json in .*lab-app-/);
  });
});
