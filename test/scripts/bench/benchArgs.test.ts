import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BenchArgsError, parseBenchArgs, parseParallelArgs } from '../../../scripts/bench/benchArgs';

test('parseBenchArgs: defaults, then each option read', () => {
  assert.deepEqual(parseBenchArgs([], true), { quick: false, models: null, backends: null, paths: null, rounds: null, torch: true, parallel: true, everyCoreOnly: false });
  const a = parseBenchArgs(['--quick', '--models=mlp,cnn', '--backends=none', '--paths=native', '--rounds=3', '--no-torch', '--no-parallel'], false);
  assert.deepEqual(a, { quick: true, models: ['mlp', 'cnn'], backends: ['none'], paths: ['native'], rounds: 3, torch: false, parallel: false, everyCoreOnly: false });
  assert.equal(parseBenchArgs(['--every-core-only', '--quick', '--models=simpleNet', '--no-torch'], true).everyCoreOnly, true);
  assert.equal(parseBenchArgs(['--every-core-only', '--paths=native'], true).everyCoreOnly, true);
});

/** Asserts that `argv` is refused with a BenchArgsError whose message matches `message`. */
function refused(argv: string[], message: RegExp, nativeAvailable = true): void {
  assert.throws(() => parseBenchArgs(argv, nativeAvailable), (e: unknown) => e instanceof BenchArgsError && e.name === 'BenchArgsError' && message.test(e.message), argv.join(' '));
}

test('parseBenchArgs refuses bad values with a BenchArgsError that says what is accepted', () => {
  refused(['--models=mlp,resnet'], /^--models: "resnet" not accepted; accepted: a comma-separated list of simpleNet, mlp, cnn$/);
  refused(['--models='], /^--models: "" not accepted/);
  refused(['--paths=gpu'], /^--paths: "gpu" not accepted; accepted: a comma-separated list of wasm, native$/);
  refused(['--backends=webgl'], /^--backends: "webgl" not accepted; accepted: .*wasm-stock, cpu-stock, none$/);
  refused(['--rounds=0'], /^--rounds: "0" not accepted; accepted: an integer ≥ 1$/);
  refused(['--rounds=two'], /^--rounds: "two" not accepted/);
  refused(['--every-core'], /^"--every-core" not accepted; accepted: --quick, --no-torch, --no-parallel, --every-core-only, --models=…/);
  refused(['--every-core-only=yes'], /^"--every-core-only=yes" not accepted; --every-core-only takes no value; accepted: /);
});

test('parseBenchArgs: --every-core-only refuses what it cannot run, and says what it accepts', () => {
  refused(['--every-core-only'], /^--every-core-only needs the native addon \(npm run native:build\)/, false);
  refused(['--every-core-only', '--paths=wasm'], /^--every-core-only runs the native path only; accepted with it: --paths=native, or no --paths$/);
  refused(['--every-core-only', '--backends=cpu'], /^--every-core-only runs no other backend; accepted with it: /);
});

test('parseParallelArgs: defaults and each option; anything else, a misspelt --record among them, is refused by name', () => {
  assert.deepEqual(parseParallelArgs([]), { quick: false, record: false, torch: true });
  assert.deepEqual(parseParallelArgs(['--quick', '--record', '--no-torch']), { quick: true, record: true, torch: false });
  for (const bad of ['--recrod', '--quick=1', 'record', '--models=cnn']) {
    assert.throws(() => parseParallelArgs(['--quick', bad]), (e: unknown) => e instanceof BenchArgsError && e.message.includes(JSON.stringify(bad)) && e.message.includes('accepted: --quick, --record, --no-torch'), bad);
  }
});
