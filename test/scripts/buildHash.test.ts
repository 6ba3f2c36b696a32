import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isBuildCurrent, sourceHash, writeBuildHash } from '../../scripts/buildHash';

/** A package with one source file and a build of it. */
function fixture(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-hash-'));
  fs.mkdirSync(path.join(root, 'src', 'core'), { recursive: true });
  fs.mkdirSync(path.join(root, 'dist'));
  fs.writeFileSync(path.join(root, 'package.json'), '{"sideEffects": []}');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}');
  fs.writeFileSync(path.join(root, 'src', 'core', 'a.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(root, 'dist', 'index.js'), '');
  return root;
}

describe('the build hash', () => {
  it('calls a build current only until an input changes, is added or is removed', () => {
    const root = fixture();
    try {
      assert.equal(isBuildCurrent({ root }), false, 'no hash recorded: not current');
      writeBuildHash({ root });
      assert.equal(isBuildCurrent({ root }), true);
      fs.writeFileSync(path.join(root, 'src', 'core', 'a.ts'), 'export const a = 2;\n');
      assert.equal(isBuildCurrent({ root }), false, 'a changed source');
      writeBuildHash({ root });
      fs.writeFileSync(path.join(root, 'src', 'b.ts'), '');
      assert.equal(isBuildCurrent({ root }), false, 'a new source');
      writeBuildHash({ root });
      fs.writeFileSync(path.join(root, 'package.json'), '{"sideEffects": ["./dist/x.js"]}');
      assert.equal(isBuildCurrent({ root }), false, 'package.json (sideEffects)');
      writeBuildHash({ root });
      fs.rmSync(path.join(root, 'src', 'b.ts'));
      assert.equal(isBuildCurrent({ root }), false, 'a removed source');
      writeBuildHash({ root });
      fs.rmSync(path.join(root, 'dist', 'index.js'));
      assert.equal(isBuildCurrent({ root }), false, 'a build without its output');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('tells a moved file from the same bytes at the old path', () => {
    const root = fixture();
    try {
      const before = sourceHash({ root });
      fs.renameSync(path.join(root, 'src', 'core', 'a.ts'), path.join(root, 'src', 'a.ts'));
      assert.notEqual(sourceHash({ root }), before);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('matches the real build: `npm run build` recorded the current sources', () => {
    // test:unit builds before it runs the tests, so dist/ must be current here.
    assert.equal(isBuildCurrent(), true);
  });
});
