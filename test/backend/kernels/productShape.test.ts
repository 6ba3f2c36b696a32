import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matrixOf, productInto, productShape } from '../../../src/backend/kernels/productShape';

const info = (shape: number[], dtype: 'float32' | 'int32' = 'float32') => ({ dataId: {}, shape, dtype });

test('productShape pairs the matrices of a broadcast that is neither equal batches nor one shared matrix', () => {
  const s = productShape(info([1, 3, 2, 2]), info([3, 1, 2, 2]), false, false);
  assert.ok(s);
  assert.deepEqual(s.outer, [3, 3]);
  assert.equal(s.batch, 9);
  assert.deepEqual([...Array(9).keys()].map((i) => [matrixOf(s, 0, i), matrixOf(s, 1, i)]), [
    [0, 0], [1, 0], [2, 0],
    [0, 1], [1, 1], [2, 1],
    [0, 2], [1, 2], [2, 2],
  ]);
});

test('productShape keeps the strided loop for equal batches and a shared matrix, and refuses what does not multiply', () => {
  assert.equal(productShape(info([2, 3, 4, 5]), info([2, 3, 5, 6]), false, false)?.pairs, null);
  assert.equal(productShape(info([2, 3, 4, 5]), info([5, 6]), false, false)?.pairs, null);
  assert.equal(productShape(info([1, 1, 4, 5]), info([3, 5, 6]), false, false)?.pairs, null, 'leading unit axes are not a broadcast of matrices');
  assert.equal(productShape(info([2, 4, 5]), info([3, 5, 6]), false, false), null, 'batches 2 and 3 do not broadcast');
  assert.equal(productShape(info([4, 5]), info([4, 6]), false, false), null, 'inner sizes differ');
  assert.equal(productShape(info([4, 5], 'int32'), info([5, 6], 'int32'), false, false), null, 'int32 goes to the stock kernel');
});

test('productInto multiplies each output matrix by its pair, transposes included', () => {
  // a: two 1x2 matrices [1, 2] and [3, 4]; b: three 2x1 matrices [1, 1], [1, 0], [0, 1], all transposed as stored.
  const s = productShape(info([2, 1, 1, 2]), info([1, 3, 1, 2]), false, true);
  assert.ok(s);
  const out = new Float32Array(6);
  productInto(new Float32Array([1, 2, 3, 4]), new Float32Array([1, 1, 1, 0, 0, 1]), out, s, false, true);
  assert.deepEqual([...out], [3, 1, 2, 7, 3, 4]);
});
