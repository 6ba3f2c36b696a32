import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gemm, transposeInto } from '../../../src/backend/kernels/gemm';
import { randomValues } from '../../helpers/kernelParity';

test('gemm multiplies a hand-checkable pair', () => {
  // [[1, 2], [3, 4]] · [[5, 6], [7, 8]] = [[19, 22], [43, 50]]; B is passed transposed.
  const c = new Float32Array(4);
  gemm(new Float32Array([1, 2, 3, 4]), 0, new Float32Array([5, 7, 6, 8]), 0, c, 0, 2, 2, 2);
  assert.deepEqual([...c], [19, 22, 43, 50]);
});

test('gemm agrees with a float64 triple loop on shapes with 4x4 blocks and edges, and honours offsets', () => {
  for (const [m, k, n] of [[4, 4, 4], [9, 7, 5], [13, 33, 6], [1, 1, 1]]) {
    const a = randomValues(m * k + 3, m);
    const bt = randomValues(n * k + 2, n);
    const c = new Float32Array(m * n + 1);
    gemm(a, 3, bt, 2, c, 1, m, k, n);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let want = 0;
        for (let q = 0; q < k; q++) want += a[3 + i * k + q] * bt[2 + j * k + q];
        assert.ok(Math.abs(c[1 + i * n + j] - want) <= 1e-6 * Math.max(1, Math.abs(want)), `${m}x${k}x${n} at ${i},${j}`);
      }
    }
  }
});

test('transposeInto transposes across its 32x32 tiles', () => {
  const rows = 37;
  const cols = 70;
  const src = randomValues(rows * cols, 1);
  const dst = new Float32Array(rows * cols);
  transposeInto(src, 0, rows, cols, dst);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) assert.equal(dst[c * rows + r], src[r * cols + c]);
});
