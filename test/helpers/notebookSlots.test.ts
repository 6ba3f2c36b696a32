import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { measuresTime } from './notebookSlots';

const NOTEBOOKS = path.resolve(__dirname, '..', '..', 'notebooks');

describe('notebook slots (test:jupyter and test:deno run notebooks two at a time)', () => {
  it('finds the chapters that measure time, in both editions, and not the others', () => {
    for (const dir of ['', 'zh']) {
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '07-memory-and-speed.ipynb')), true);
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '08-more-cores.ipynb')), true);
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '03-accumulation.ipynb')), false);
      assert.equal(measuresTime(path.join(NOTEBOOKS, dir, '06-batchnorm.ipynb')), false);
    }
  });
});
