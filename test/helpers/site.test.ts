import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkEach } from './site';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('checkEach (the site tests’ loop over pages)', () => {
  it('checks every item, never more than atOnce at a time, and more than one at a time when allowed', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await checkEach([1, 2, 3, 4, 5], async (n) => {
      running++;
      most = Math.max(most, running);
      await pause(20);
      seen.push(n);
      running--;
    }, 2);
    assert.deepEqual(seen.sort(), [1, 2, 3, 4, 5]);
    assert.equal(most, 2);
  });

  it('fails with the first error after the started checks settle, and starts none after it', async () => {
    const started: number[] = [];
    let settled = 0;
    await assert.rejects(
      checkEach([1, 2, 3, 4, 5, 6], async (n) => {
        started.push(n);
        if (n === 2) throw new Error('page 2 is wrong');
        await pause(30);
        settled++;
      }, 2),
      /page 2 is wrong/,
    );
    assert.deepEqual(started, [1, 2], 'nothing started after the failure');
    assert.equal(settled, 1, 'the check beside the failing one finished');
  });
});
