import { test } from 'node:test';
import assert from 'node:assert/strict';
import { relativeError } from './kernelParity';

const f = (v: number[]) => Float32Array.from(v);

test('relativeError: a NaN shared at one position does not hide a mismatch at another (issue 31)', () => {
  assert.equal(relativeError(f([NaN, 1]), f([NaN, 2])), 0.5);
  assert.equal(relativeError(f([1, NaN, 5]), f([NaN, NaN, 5])), Infinity, 'a number where the reference has NaN');
  assert.equal(relativeError(f([NaN, 5]), f([1, 5])), Infinity, 'a NaN where the reference has a number');
});

test('relativeError: equal non-finite values agree; different infinities, lengths and a finite miss do not', () => {
  assert.equal(relativeError(f([NaN, Infinity, -Infinity, 2]), f([NaN, Infinity, -Infinity, 2])), 0);
  assert.equal(relativeError(f([Infinity]), f([-Infinity])), Infinity);
  assert.equal(relativeError(f([1, 2]), f([1, 2, 3])), Infinity);
  assert.equal(relativeError(f([1, 2.5]), f([1, 2])), 0.25);
  assert.equal(relativeError(f([0.5]), f([0]), 50), 0.01, 'relative to the floor when the reference is near zero');
});
