import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { HANG_MS } from '../helpers/ceilings';

/**
 * No test waits on a clock a busy machine can beat (issue 34).
 *
 * Every Chromium the tests drive comes from test/helpers/chromium.ts, which gives every wait of
 * every page HANG_MS instead of Playwright's 30 s: a loaded CI machine took longer than 30 s to
 * load a page (run G, 2026-12-04), so a stray `chromium.launch` or `browser.newPage` is a test
 * that fails on a busy machine. Read as text: a value import of Playwright's `chromium`, or a
 * `newPage` called on a Browser, anywhere else breaks the rule.
 *
 * And no `timeout:` written as a number below HANG_MS (test/helpers/ceilings.ts): a 60 s, 120 s
 * or 300 s ceiling on a bench or a PyTorch run is a speed assertion on a loaded machine.
 */
const ROOT = join(__dirname, '..', '..');
const HOME = 'test/helpers/chromium.ts';

/** The rule's breaks in one file's source: a line number and what was found. */
function waitRuleBreaks(source: string): string[] {
  const breaks: string[] = [];
  source.split('\n').forEach((line, i) => {
    if (/^\s*(\/\/|\*)/.test(line)) return;
    if (/import\s*\{[^}]*\bchromium\b[^}]*\}\s*from\s*'playwright(-core)?'/.test(line) && !/import\s+type\b/.test(line)) breaks.push(`line ${i + 1}: imports Playwright's chromium`);
    if (/\bchromium\.launch(PersistentContext)?\(/.test(line)) breaks.push(`line ${i + 1}: launches Chromium itself`);
    if (/\bbrowser\.newPage\(/.test(line)) breaks.push(`line ${i + 1}: opens a page without the ceiling`);
    for (const m of line.matchAll(/\btimeout:\s*([0-9][0-9_]*)\s*(?=[,})]|$)/g)) if (Number(m[1].replace(/_/g, '')) < HANG_MS) breaks.push(`line ${i + 1}: a ${m[1]} ms timeout, below HANG_MS`);
  });
  return breaks;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'node_modules' ? [] : tsFiles(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('waits a busy machine cannot fail', () => {
  it('finds each way around the helper (the rule can fail)', () => {
    assert.deepEqual(waitRuleBreaks("import { chromium, type Browser } from 'playwright-core';"), ["line 1: imports Playwright's chromium"]);
    assert.deepEqual(waitRuleBreaks("const b = await chromium.launch({ args: [] });\nconst c = await chromium.launchPersistentContext(dir, {});"), ['line 1: launches Chromium itself', 'line 2: launches Chromium itself']);
    assert.deepEqual(waitRuleBreaks('  const page = await browser.newPage({ viewport });'), ['line 1: opens a page without the ceiling']);
    assert.deepEqual(waitRuleBreaks("test('x', { timeout: 120_000 }, () => {});\nspawnSync(a, b, { timeout: 600_000 });\nit('y', { timeout: 3 * HANG_MS }, f);"), ['line 1: a 120_000 ms timeout, below HANG_MS']);
    assert.deepEqual(waitRuleBreaks("import type { Browser, Page } from 'playwright-core';\nconst page = await newPage(browser);\n// browser.newPage( in a comment"), []);
  });

  it('holds in test/ and scripts/: Chromium and its pages come only from test/helpers/chromium.ts, and no ceiling is below HANG_MS', () => {
    const found = ['test', 'scripts']
      .flatMap((d) => tsFiles(join(ROOT, d)))
      .map((f) => relative(ROOT, f).split(sep).join('/'))
      .filter((f) => f !== HOME && f !== 'test/project/waits.test.ts')
      .flatMap((f) => waitRuleBreaks(readFileSync(join(ROOT, f), 'utf8')).map((b) => `${f}, ${b}`));
    assert.deepEqual(found, []);
  });
});
