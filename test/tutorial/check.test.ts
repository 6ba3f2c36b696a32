import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { CheckFailedError, check, markdownBundle, showMarkdown } from '../../src/tutorial/check';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tslabJupyter = require('tslab/dist/jupyter') as { lastWriteDisplayData: unknown };

describe('check', () => {
  afterEach(() => mock.restoreAll());

  it('prints the verified sentence, once, after a check mark', () => {
    const log = mock.method(console, 'log', () => {});
    check(1 + 1 === 2, 'two and two micro-batches make four');
    assert.deepEqual(log.mock.calls.map((c) => c.arguments), [['✓ two and two micro-batches make four']]);
  });

  it('throws a CheckFailedError naming the claim and the detail when it does not hold, printing nothing', () => {
    const log = mock.method(console, 'log', () => {});
    assert.throws(
      () => check(0.42 > 1.5, 'two workers are faster', 'speed-up 0.42'),
      (e: unknown) => e instanceof CheckFailedError && e.name === 'CheckFailedError' && e.message === 'not true on this run: two workers are faster (speed-up 0.42)',
    );
    assert.equal(log.mock.callCount(), 0);
  });

  it('refuses a condition that is not a boolean, so a number or a promise is never read as true', () => {
    for (const bad of [1, 'yes', Promise.resolve(true), undefined]) {
      assert.throws(() => check(bad as never, 'a claim'), /^Error: check: condition must be a boolean \(compare the measured values first\); got /);
    }
  });

  it('refuses an empty or multi-line sentence', () => {
    for (const bad of ['', '  ', 'one\ntwo', 3]) {
      assert.throws(() => check(true, bad as never), /^Error: check: sentence must be a non-empty one-line string saying what holds; got /);
    }
  });
});

describe('showMarkdown', () => {
  afterEach(() => {
    tslabJupyter.lastWriteDisplayData = null;
  });

  it('sends text/markdown with the same text as text/plain through the kernel’s writer', () => {
    const sent: { data: Record<string, string> }[] = [];
    tslabJupyter.lastWriteDisplayData = (content: { data: Record<string, string> }) => sent.push(content);
    void showMarkdown('Two workers gave **1.9×**.');
    assert.deepEqual(sent.map((s) => s.data), [{ 'text/markdown': 'Two workers gave **1.9×**.', 'text/plain': 'Two workers gave **1.9×**.' }]);
  });

  it('refuses empty text and fails outside a kernel, naming the alternative', () => {
    assert.throws(() => markdownBundle(''), /^Error: markdownBundle: text must be a non-empty markdown string; got ""/);
    assert.throws(() => showMarkdown('x'), /showMarkdown: no notebook kernel .* elsewhere use markdownBundle\(text\)/);
  });
});
