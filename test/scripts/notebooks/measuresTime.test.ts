import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { measuresTime } from '../../../scripts/notebooks/measuresTime';

const NOTEBOOKS = path.resolve(__dirname, '..', '..', '..', 'notebooks');

describe('measuresTime (the notebooks that run alone)', () => {
  it('finds the chapters that measure time, in both editions, and not the others', () => {
    for (const dir of ['', 'zh']) {
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '07-memory-and-speed.ipynb')), true);
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '08-more-cores.ipynb')), true);
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '03-accumulation.ipynb')), false);
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '06-batchnorm.ipynb')), false);
    }
  });

  it('is false for a file that is no notebook, which the runner then reports', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measures-time-'));
    try {
      fs.writeFileSync(path.join(dir, 'bad.ipynb'), '{ not json');
      assert.equal(measuresTime(path.join(dir, 'bad.ipynb')), false);
      fs.writeFileSync(path.join(dir, 'md.ipynb'), JSON.stringify({ cells: [{ cell_type: 'markdown', source: 'performance.now()' }] }));
      assert.equal(measuresTime(path.join(dir, 'md.ipynb')), false, 'only code counts');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
