import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { loadNativeBlas } from '../../src/backend/kernels/nativeBlas';
import { nativeAvailable } from '../helpers/kernelParity';
import { HANG_MS } from '../helpers/ceilings';

/**
 * Every entry point of the native addon (native/*.cc) with hostile arguments: wrong types and
 * counts, short arrays, negative, fractional and huge sizes, sizes whose products overflow,
 * detached and wrong-typed buffers, geometry getters that throw or detach another argument.
 * Each must throw a JavaScript error and leave the process working. The calls run in a child
 * process, so that an abort (which a bad argument caused before: napi_throw with an exception
 * pending, exit 134) fails the test instead of killing the test runner.
 */

const skip = nativeAvailable() ? false : 'the native addon is not built here (npm run native:build says why)';

/** What one call did in the child. */
interface Outcome {
  label: string;
  threw: boolean;
  name?: string;
  message?: string;
}

/** Helpers every child script has: the addon, arrays, a detached array, a geometry with a throwing getter. */
const PRELUDE = `
const addon = require(process.env.ADDON);
const f = (n) => new Float32Array(n);
const detached = (n = 16) => { const a = new Float32Array(n); structuredClone(a.buffer, { transfer: [a.buffer] }); return a; };
const withGetter = (values, i, get) => { const g = values.slice(); Object.defineProperty(g, i, { get, enumerable: true }); return g; };
const throwingAt = (values, i) => withGetter(values, i, () => { throw new RangeError('getter ' + i); });
const set = (args, i, v) => { const a = args.slice(); a[i] = v; return a; };
const out = [];
const run = (label, fn) => {
  try { fn(); out.push({ label, threw: false }); }
  catch (e) { out.push({ label, threw: true, name: e && e.constructor && e.constructor.name, message: String(e && e.message) }); }
};
`;

/** Runs `body` (calls of `run(label, fn)`) in a child process; returns each outcome, the exit status and signal. */
function inChild(body: string): { outcomes: Outcome[]; status: number | null; signal: string | null; stderr: string } {
  const status = loadNativeBlas();
  if (!status.available) throw new Error(`the native addon ${status.reason}`);
  const child = spawnSync(process.execPath, ['-e', `${PRELUDE}\n${body}\nprocess.stdout.write(JSON.stringify(out));`], {
    env: { ...process.env, ADDON: status.path },
    encoding: 'utf8',
    timeout: HANG_MS,
  });
  let outcomes: Outcome[] = [];
  try {
    outcomes = JSON.parse(child.stdout) as Outcome[];
  } catch {
    // No output: the child died; the status assertion says how.
  }
  return { outcomes, status: child.status, signal: child.signal, stderr: child.stderr };
}

/**
 * Asserts that the child lived, that every call labelled with a leading "!" threw a TypeError
 * naming `owner` (or, for "getter" labels, the getter's own error), and that the others did not
 * throw.
 */
function expectRefusals(owner: string, body: string): void {
  const { outcomes, status, signal, stderr } = inChild(body);
  assert.equal(signal, null, `the child was killed by ${signal}: ${stderr.slice(0, 400)}`);
  assert.equal(status, 0, `the child exited with ${status}: ${stderr.slice(0, 400)}`);
  assert.ok(outcomes.length >= 3, 'the child reported its calls');
  for (const o of outcomes) {
    const hostile = o.label.startsWith('!');
    if (!hostile) {
      assert.equal(o.threw, false, `${owner}: ${o.label} threw ${o.message}`);
      continue;
    }
    assert.equal(o.threw, true, `${owner}: ${o.label} did not throw`);
    if (o.label.includes('getter throws')) {
      assert.equal(o.name, 'RangeError', `${owner}: ${o.label}: the getter's own error propagates (${o.message})`);
      continue;
    }
    assert.equal(o.name, 'TypeError', `${owner}: ${o.label}: ${o.message}`);
    assert.match(o.message as string, new RegExp(`^tfjs-accumulate native ${owner}: `), `${owner}: ${o.label}`);
  }
}

test('sgemm refuses hostile arguments with a TypeError and the process lives', { skip }, () => {
  expectRefusals(
    'sgemm',
    `
const ok = [false, false, 2, 2, 2, f(4), 2, 4, f(4), 2, 4, f(4), 2, 4, 1, 0];
const call = (args) => () => addon.sgemm(...args);
run('a valid product', call(ok));
run('! no arguments', () => addon.sgemm());
run('! 15 arguments', call(ok.slice(0, 15)));
run('! 17 arguments', call([...ok, 0]));
run('! transA a number', call(set(ok, 0, 1)));
for (const [what, v] of [['a string', '2'], ['negative', -1], ['fractional', 1.5], ['NaN', NaN], ['Infinity', Infinity], ['2^31', 2 ** 31], ['1e300', 1e300], ['an object whose valueOf throws', { valueOf() { throw new RangeError('valueOf'); } }], ['a BigInt', 2n]]) {
  run('! m ' + what, call(set(ok, 2, v)));
}
run('! k 2^31 - 1 with 4-element arrays', call(set(ok, 4, 2 ** 31 - 1)));
for (const [what, v] of [['a Float64Array', new Float64Array(4)], ['an Int32Array', new Int32Array(4)], ['a DataView', new DataView(new ArrayBuffer(16))], ['a Buffer', Buffer.alloc(16)], ['a plain array', [0, 0, 0, 0]], ['null', null], ['a Proxy of a Float32Array', new Proxy(f(4), {})], ['detached', detached(4)], ['too short', f(3)]]) {
  run('! a ' + what, call(set(ok, 5, v)));
}
run('! c detached', call(set(ok, 11, detached(4))));
run('! c too short', call(set(ok, 11, f(3))));
run('! lda 0', call(set(ok, 6, 0)));
run('! lda below the row length', call(set(ok, 6, 1)));
run('! batch 2^31 - 1', call(set(ok, 14, 2 ** 31 - 1)));
run('! strideA 2^31 - 1 over a batch of 2', call(set(set(ok, 7, 2 ** 31 - 1), 14, 2)));
run('! strideC 0 over a batch of 2 (outputs on top of each other)', call(set(set(set(set(ok, 7, 0), 10, 0), 13, 0), 14, 2)));
run('! ldc 0 for an empty product', call(set(set(set(ok, 2, 0), 11, f(0)), 12, 0)));
run('! beta a string', call(set(ok, 15, '1')));
run('a valid product after all of them', call(ok));
`,
  );
});

/** A geometry of a 4x4 one-channel image and a 1x1 filter: 16 patch rows of depth 1. */
const GEOMETRY = '[1, 4, 4, 1, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0]';

/** Hostile geometries, row ranges and arrays shared by im2col and col2im; `call(x, g, start, count, dst)`. */
const PATCH_CASES = `
const g = ${GEOMETRY};
run('a valid call', call(f(16), g, 0, 16, f(16)));
run('! geometry an Int32Array', call(f(16), Int32Array.from(g), 0, 16, f(16)));
run('! geometry an object', call(f(16), { length: 14 }, 0, 16, f(16)));
run('! geometry a Proxy of an array', call(f(16), new Proxy(g.slice(), {}), 0, 16, f(16)));
run('! geometry of 13 integers', call(f(16), g.slice(0, 13), 0, 16, f(16)));
run('! geometry with a hole', call(f(16), (() => { const h = g.slice(); delete h[3]; return h; })(), 0, 16, f(16)));
for (const i of [0, 5, 13]) run('! geometry getter throws at ' + i, call(f(16), throwingAt(g, i), 0, 16, f(16)));
for (const [what, v] of [['negative', -1], ['2^31', 2 ** 31], ['a string', '4'], ['NaN', NaN], ['fractional', 0.5]]) run('! geometry.inHeight ' + what, call(f(16), set(g, 1, v), 0, 16, f(16)));
for (const [i, what] of [[6, 'filterHeight'], [8, 'strideHeight'], [11, 'dilationWidth']]) run('! geometry.' + what + ' 0', call(f(16), set(g, i, 0), 0, 16, f(16)));
run('! products past 2^62 with short arrays', call(f(16), [2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 1, 1, 1, 1, 1, 1, 0, 0], 0, 1, f(16)));
run('! a filter of 2^31 - 1 taps', call(f(16), set(set(g, 6, 2 ** 31 - 1), 7, 2 ** 31 - 1), 0, 1, f(16)));
run('! rowStart + rowCount past the last row', call(f(16), g, 10, 7, f(16)));
run('! rowCount 2^31 - 1', call(f(16), g, 0, 2 ** 31 - 1, f(16)));
run('! rowStart negative', call(f(16), g, -1, 1, f(16)));
run('! image array too short', call(f(15), g, 0, 16, f(16)));
run('! patch array too short', call(f(16), g, 0, 16, f(15)));
run('! image array detached', call(detached(16), g, 0, 16, f(16)));
run('! patch array a Float64Array', call(f(16), g, 0, 16, new Float64Array(16)));
// A getter that detaches the image and returns a valid value: the arrays are read after the geometry.
run('! a geometry getter detaches the image array', () => { const x = f(16); const h = withGetter(g, 2, () => { structuredClone(x.buffer, { transfer: [x.buffer] }); return 4; }); call(x, h, 0, 16, f(16))(); });
run('a valid call after all of them', call(f(16), g, 0, 16, f(16)));
`;

test('im2col refuses hostile arguments, geometry getters that throw included, and the process lives (issue 31)', { skip }, () => {
  expectRefusals(
    'im2col',
    `
const call = (x, g, start, count, dst) => () => addon.im2col(x, g, start, count, dst);
run('! no arguments', () => addon.im2col());
run('! 6 arguments', () => addon.im2col(f(16), ${GEOMETRY}, 0, 16, f(16), true));
${PATCH_CASES}
`,
  );
});

test('col2im refuses hostile arguments, geometry getters that throw included, and the process lives (issue 31)', { skip }, () => {
  expectRefusals(
    'col2im',
    `
// col2im(cols, geometry, rowStart, rowCount, dx, zero): the patch array first, the image fifth.
const call = (x, g, start, count, dst) => () => addon.col2im(dst, g, start, count, x, true);
run('! no arguments', () => addon.col2im());
run('! 5 arguments', () => addon.col2im(f(16), ${GEOMETRY}, 0, 16, f(16)));
run('! zero a number', () => addon.col2im(f(16), ${GEOMETRY}, 0, 16, f(16), 1));
${PATCH_CASES}
`,
  );
});

test('channelSums refuses hostile arguments and the process lives', { skip }, () => {
  expectRefusals(
    'channelSums',
    `
const call = (...args) => () => addon.channelSums(...args);
run('a valid call', call(f(12), 4, 3, f(3), 1));
run('! no arguments', call());
run('! 4 arguments', call(f(12), 4, 3, f(3)));
run('! scale a string', call(f(12), 4, 3, f(3), '1'));
run('! rows negative', call(f(12), -4, 3, f(3), 1));
run('! rows x cols past 2^62 with a short x', call(f(12), 2 ** 31 - 1, 2 ** 31 - 1, f(3), 1));
run('! cols 2^31 - 1 with no rows and a short out', call(f(0), 0, 2 ** 31 - 1, f(3), 1));
run('! x too short', call(f(11), 4, 3, f(3), 1));
run('! out too short', call(f(12), 4, 3, f(2), 1));
run('! x detached', call(detached(12), 4, 3, f(3), 1));
run('! out an Int32Array', call(f(12), 4, 3, new Int32Array(3), 1));
run('a valid call after all of them', call(f(12), 4, 3, f(3), 1));
`,
  );
});

test('channelBinary refuses hostile arguments and the process lives', { skip }, () => {
  expectRefusals(
    'channelBinary',
    `
const call = (...args) => () => addon.channelBinary(...args);
run('a valid call', call(0, f(12), 4, 3, f(3), f(12), false));
run('! no arguments', call());
run('! 6 arguments', call(0, f(12), 4, 3, f(3), f(12)));
for (const op of [4, -1, 1.5, 'add']) run('! op ' + op, call(op, f(12), 4, 3, f(3), f(12), false));
run('! channelFirst a number', call(0, f(12), 4, 3, f(3), f(12), 1));
run('! full too short', call(0, f(11), 4, 3, f(3), f(12), false));
run('! perChannel too short', call(0, f(12), 4, 3, f(2), f(12), false));
run('! out too short', call(0, f(12), 4, 3, f(3), f(11), false));
run('! rows x cols past 2^62', call(0, f(12), 2 ** 31 - 1, 2 ** 31 - 1, f(3), f(12), false));
run('! out detached', call(0, f(12), 4, 3, f(3), detached(12), false));
run('! perChannel a Float64Array', call(0, f(12), 4, 3, new Float64Array(3), f(12), false));
run('a valid call after all of them', call(3, f(12), 4, 3, f(3), f(12), true));
`,
  );
});

test('info takes no arguments', { skip }, () => {
  expectRefusals(
    'info',
    `
run('a valid call', () => { if (typeof addon.info().blas !== 'string') throw new Error('no blas'); });
run('! an argument', () => addon.info(1));
run('a valid call after', () => addon.info());
`,
  );
});

test('setThreads refuses counts outside 1 to the cores, and the process lives', { skip }, () => {
  const cores = os.cpus().length;
  expectRefusals(
    'setThreads',
    `
run('a valid call', () => addon.setThreads(1));
run('! no arguments', () => addon.setThreads());
run('! two arguments', () => addon.setThreads(1, 1));
for (const v of [0, -1, 1.5, '2', 2 ** 31, 1e9, ${cores + 1}, NaN, { valueOf() { throw new RangeError('valueOf'); } }]) run('! threads ' + String(typeof v === 'object' ? 'an object' : v), () => addon.setThreads(v));
run('a valid call after all of them', () => addon.setThreads(1));
`,
  );
});
