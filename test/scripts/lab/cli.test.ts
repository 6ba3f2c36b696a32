import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { labEnv, parseLabArgs } from '../../../scripts/lab/cli';

describe('npm run lab arguments', () => {
  it('takes --app, --port=N and --allow-root', () => {
    assert.deepEqual(parseLabArgs([]), { app: false, allowRoot: false });
    assert.deepEqual(parseLabArgs(['--app', '--port=8890', '--allow-root']), { app: true, port: 8890, allowRoot: true });
  });

  it('names the accepted arguments for anything else', () => {
    for (const bad of ['--deno', '--port=0', '--port=70000', '--port=x', 'notebooks/']) {
      assert.throws(() => parseLabArgs([bad]), /lab: unknown argument .*; accepted: --app, --port=N \(1-65535\), --allow-root\./, bad);
    }
  });

  it("puts this clone's kernelspecs first on JUPYTER_PATH and keeps the reader's", () => {
    assert.equal(labEnv('/p', {}).JUPYTER_PATH, path.join('/p', 'share', 'jupyter'));
    assert.equal(labEnv('/p', { JUPYTER_PATH: '/mine' }).JUPYTER_PATH, [path.join('/p', 'share', 'jupyter'), '/mine'].join(path.delimiter));
  });
});
