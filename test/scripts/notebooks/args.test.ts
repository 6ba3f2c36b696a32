import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkJobs, checkTimeoutSeconds, MAX_TIMEOUT_SECONDS, parseTimeout, RunnerArgumentError } from '../../../scripts/notebooks/args';

describe('the per-cell timeout', () => {
  it('is at most 2^31 - 1 ms, the longest delay a Node timer holds', () => {
    assert.equal(MAX_TIMEOUT_SECONDS * 1000, 2147483647);
    assert.equal(parseTimeout(String(MAX_TIMEOUT_SECONDS)), MAX_TIMEOUT_SECONDS);
    assert.equal(parseTimeout('3'), 3);
    assert.equal(parseTimeout('0.5'), 0.5);
  });

  it('is no limit only when asked for by name: --timeout=none, or Infinity from code', () => {
    assert.equal(parseTimeout('none'), Infinity);
    assert.equal(checkTimeoutSeconds(Infinity), Infinity);
  });

  it('refuses a larger value with a named error instead of letting the timer fire at once', () => {
    for (const value of ['2147483.648', '3000000', '1e10', 'Infinity', '0', '-1', 'soon', '', undefined]) {
      assert.throws(
        () => parseTimeout(value),
        (e: Error) => e instanceof RunnerArgumentError && e.name === 'RunnerArgumentError' && /^runNotebooks: --timeout must be a positive number of seconds up to 2147483\.647 \(2\^31 - 1 ms\), or none for no limit; got "/.test(e.message),
        String(value),
      );
    }
    for (const value of [3e6, 0, -1, NaN, '10']) {
      assert.throws(() => checkTimeoutSeconds(value), (e: Error) => e.name === 'RunnerArgumentError' && /cellTimeoutSeconds must be .* or Infinity for no limit; got /.test(e.message));
    }
  });
});

describe('jobs', () => {
  it('is a whole number from 1 to 16 from code too, or a named error', () => {
    assert.equal(checkJobs(1), 1);
    assert.equal(checkJobs(16), 16);
    for (const bad of [0, 17, 1.5, NaN, Infinity, '2']) assert.throws(() => checkJobs(bad), (e: Error) => e instanceof RunnerArgumentError && /jobs must be a whole number from 1 to 16/.test(e.message));
  });
});
