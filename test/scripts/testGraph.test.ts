import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childCpuSeconds, counts, failureReport, lineWriter, MAX_FAILURE_LINES, PartOrderError, runGraph, type Part } from '../../scripts/testGraph';

// A part that prints its name with start and end times (ms since the epoch), after `ms` of sleep.
const timed = (name: string, ms: number, code = 0): Part => ({
  name,
  command: [process.execPath, '-e', `const t=Date.now();setTimeout(()=>{console.log('${name} '+t+' '+Date.now());process.exit(${code})},${ms})`],
});
// A part that meets another: it leaves `name` in `dir` and waits for `other` there, so it ends
// only if the other part runs while it waits (side by side), and fails after a ceiling of 60 s
// that only a hang reaches. It prints its start and end as `timed` does.
const meeting = (name: string, other: string, dir: string): Part => ({
  name,
  command: [
    process.execPath,
    '-e',
    `const fs=require('fs'),p=require('path'),t=Date.now();fs.writeFileSync(p.join(${JSON.stringify(dir)},'${name}'),'');` +
      `const w=setInterval(()=>{if(fs.existsSync(p.join(${JSON.stringify(dir)},'${other}'))){clearInterval(w);console.log('${name} '+t+' '+Date.now());}else if(Date.now()-t>60000){console.log('${name} never met ${other}');process.exit(1);}},10)`,
  ],
});
const spans = (text: string, name: string): [number, number] => {
  const m = new RegExp(`\\] ${name} (\\d+) (\\d+)$|^${name} (\\d+) (\\d+)$`, 'm').exec(text);
  assert.ok(m, `no timing line of ${name} in:\n${text}`);
  return (m[1] ? [Number(m[1]), Number(m[2])] : [Number(m[3]), Number(m[4])]) as [number, number];
};

describe('npm test parts (scripts/testGraph.ts)', () => {
  it('runs parts side by side, and a part only after every part it needs has ended', async () => {
    let text = '';
    // a1 and b1 wait for each other: both end only if they run side by side, whatever the
    // machine's load. a2 needs a1; c1 needs a2 and b1.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
    const parts = [meeting('a1', 'b1', dir), meeting('b1', 'a1', dir), timed('a2', 100), timed('c1', 50)];
    const results = await runGraph(parts, { a2: ['a1'], c1: ['a2', 'b1'] }, { cwd: process.cwd(), write: (t) => (text += t) });
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(results.map((r) => r.name), ['a1', 'b1', 'a2', 'c1']);
    assert.ok(results.every((r) => r.ok), `a1 and b1 did not run side by side:\n${text}`);
    const [a1, a2, b1, c1] = ['a1', 'a2', 'b1', 'c1'].map((n) => spans(text, n));
    assert.ok(a1[1] <= a2[0], 'a2 started before a1 ended');
    assert.ok(c1[0] >= Math.max(a2[1], b1[1]), 'c1 started before a part it needs ended');
  });

  it('never runs more parts at once than it has slots, and starts the first ready part first', async () => {
    let text = '';
    const parts = ['p', 'q', 'r', 's'].map((n) => timed(n, 150));
    await runGraph(parts, {}, { cwd: process.cwd(), write: (t) => (text += t), slots: 2 });
    const at = parts.map((p) => spans(text, p.name));
    for (const [start] of at) assert.ok(at.filter(([s, e]) => s <= start && start < e).length <= 2, `more than 2 parts ran at ${start}:\n${text}`);
    // r waits for a slot, so it starts only after p or q ended.
    assert.ok(at[2][0] >= Math.min(at[0][1], at[1][1]), text);
    // The order the graph started them in is the order of their header lines (written as each
    // starts); the children's own clocks could disagree by their start-up times.
    assert.ok(text.indexOf('[r] ===== r:') < text.indexOf('[s] ===== s:'), 'r is listed before s and started after it');
  });

  it('prefixes every line with its part', async () => {
    let text = '';
    await runGraph([timed('x', 10), timed('y', 10)], {}, { cwd: process.cwd(), write: (t) => (text += t) });
    const lines = text.split('\n').filter((l) => l !== '');
    assert.ok(lines.length > 0 && lines.every((l) => l.startsWith('[x] ') || l.startsWith('[y] ')), text);
  });

  it('keeps going after a failure, and reports it with its exit code', async () => {
    const results = await runGraph([timed('bad', 10, 3), timed('after', 10), timed('other', 10)], { after: ['bad'] }, { cwd: process.cwd(), write: () => {} });
    assert.deepEqual(results.map((r) => [r.name, r.ok, r.code, r.failed]), [['bad', false, 3, 1], ['after', true, 0, 0], ['other', true, 0, 0]]);
  });

  it('refuses a list whose needs it cannot meet, and bad slots, before running anything', async () => {
    let text = '';
    await assert.rejects(runGraph([timed('late', 10), timed('early', 10)], { late: ['early'] }, { cwd: process.cwd(), write: (t) => (text += t) }), PartOrderError);
    await assert.rejects(runGraph([timed('one', 10)], {}, { cwd: process.cwd(), write: (t) => (text += t), slots: 0 }), RangeError);
    assert.equal(text, '', 'a part ran');
  });

  it('reports a command that cannot start as a failed part', async () => {
    const results = await runGraph([{ name: 'missing', command: ['/nonexistent/command'] }], {}, { cwd: process.cwd(), write: () => {} });
    assert.equal(results[0].ok, false);
    assert.equal(results[0].failed, 1);
  });

  it("counts a part's CPU time, its children's included, and none for a part that only sleeps", async () => {
    // The loop runs until it has used 0.6 s of CPU, not 0.6 s of wall time: on a busy machine a
    // wall-clock loop gets a fraction of a core (0.17 s of CPU at load 15, measured).
    const busy: Part = { name: 'busy', command: ['bash', '-c', `${JSON.stringify(process.execPath)} -e "const c=()=>{const u=process.cpuUsage();return (u.user+u.system)/1e3};while(c()<600);"`] };
    const [spin, sleep] = await runGraph([busy, timed('sleep', 600)], {}, { cwd: process.cwd(), write: () => {} });
    assert.ok(spin.cpuSeconds !== null && spin.cpuSeconds >= 0.55, `a busy loop of 0.6 s of CPU in a grandchild: ${spin.cpuSeconds} s of CPU`);
    assert.ok(sleep.cpuSeconds !== null && sleep.cpuSeconds < 0.4, `a 0.6 s sleep: ${sleep.cpuSeconds} s of CPU`);
    assert.equal(childCpuSeconds('0m0.001s 0m0.002s\n1m2.500s 0m0.500s\n'), 63);
    assert.equal(childCpuSeconds('garbage'), null);
  });

  it('reads the test runner totals, and nothing from output without them', () => {
    assert.deepEqual(counts('ℹ tests 5\nℹ pass 4\nℹ fail 1\nℹ cancelled 0\n# tests 2\n# pass 2\n# fail 0\n'), { passed: 6, failed: 1 });
    assert.equal(counts('pass 3\nall good\n'), undefined);
  });

  it("keeps the test runner's failing-tests report of a part, without stack frames, and none of a passing part", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-failures-'));
    try {
      const file = path.join(dir, 'two.test.mjs');
      fs.writeFileSync(file, "import { it } from 'node:test';\nimport assert from 'node:assert/strict';\nit('passes', () => {});\nit('fails on purpose', () => assert.equal(1, 2, 'one is not two'));\n");
      // Without NODE_TEST_CONTEXT, which this runner sets and which would make the child report to it in TAP.
      const run = (only: string): Part => ({ name: only, command: ['env', '-u', 'NODE_TEST_CONTEXT', process.execPath, '--test', '--test-reporter=spec', `--test-name-pattern=${only}`, file] });
      const [bad, good] = await runGraph([run('fails on purpose'), run('passes')], {}, { cwd: dir, write: () => {} });
      assert.equal(bad.failures[0], '✖ failing tests:', bad.failures.join('\n'));
      assert.ok(bad.failures.some((l) => l.includes('✖ fails on purpose')) && bad.failures.some((l) => l.includes('one is not two')), bad.failures.join('\n'));
      assert.ok(bad.failures.every((l) => !/^\s+at /.test(l)), 'stack frames are left out');
      assert.deepEqual(good.failures, []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const long = failureReport(`ok\n✖ failing tests:\n${Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n')}\n`);
    assert.equal(long.length, MAX_FAILURE_LINES + 1);
    assert.match(long[MAX_FAILURE_LINES], /^… 121 more lines/, "the header and 200 lines, 80 kept");
  });

  it('splits chunks into whole lines', () => {
    const got: string[] = [];
    const w = lineWriter('> ', (t) => got.push(t));
    w.push('ab');
    w.push('c\nde');
    w.push('\n\nf');
    assert.deepEqual(got, ['> abc\n', '> de\n', '> \n']);
    w.end();
    assert.deepEqual(got.slice(3), ['> f\n']);
  });
});
