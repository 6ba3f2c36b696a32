import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FLOPS_PER_ITERATION, measureSimdPeak, simdPeakModuleBytes } from '../../../src/backend/kernels/simdPeak';

test('the SIMD peak loop is valid wasm and measures a plausible rate', () => {
  assert.ok(WebAssembly.validate(simdPeakModuleBytes(false)));
  assert.equal(FLOPS_PER_ITERATION, 128);
  const peak = measureSimdPeak({ runs: 5, iterations: 20_000 });
  assert.ok(peak !== null);
  // Between a scalar loop's rate and far beyond any 128-bit SIMD core: a broken loop (dead code
  // removed, or the work not done) falls outside.
  assert.ok(peak.gflops > 0.5 && peak.gflops < 500, `${peak.gflops}`);
});

test('relaxed SIMD is reported only where the engine validates it', () => {
  const relaxed = WebAssembly.validate(simdPeakModuleBytes(true));
  const peak = measureSimdPeak({ runs: 2, iterations: 1000 });
  assert.equal(peak?.relaxedGflops !== null, relaxed);
});
