import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadNativeBlas } from '../../../src/backend/kernels/nativeBlas';
import { measureNativeGemmPeak } from '../../../src/backend/kernels/nativePeak';
import { nativeAvailable } from '../../helpers/kernelParity';

test('measureNativeGemmPeak rejects bad sizes and durations by name', () => {
  assert.throws(() => measureNativeGemmPeak({ size: 0 }), /measureNativeGemmPeak: size must be an integer from 1 to 4096; got 0/);
  assert.throws(() => measureNativeGemmPeak({ seconds: -1 }), /measureNativeGemmPeak: seconds must be a finite number of seconds, 0 or more; got -1/);
});

test('without the addon there is no native peak', () => {
  try {
    loadNativeBlas({ reload: true, load: () => { throw new Error('absent'); } });
    assert.equal(measureNativeGemmPeak({ seconds: 0 }), null);
  } finally {
    loadNativeBlas({ reload: true });
  }
});

test('the native GEMM peak is positive, at the threads asked for, and leaves the threads as they were', { skip: !nativeAvailable() }, () => {
  const status = loadNativeBlas();
  assert.ok(status.available);
  const peak = measureNativeGemmPeak({ size: 64, seconds: 0, threads: 1 });
  assert.ok(peak !== null && peak.gflops > 0 && peak.size === 64);
  if (status.addon.info().blas === 'OpenBLAS') {
    assert.equal(peak.threads, 1);
    assert.equal(measureNativeGemmPeak({ size: 64, seconds: 0, threads: 'all' })?.threads, require('os').cpus().length);
    assert.equal(status.addon.info().threads, 1, 'put back to one thread');
  }
});
