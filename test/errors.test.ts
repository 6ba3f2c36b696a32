import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { argumentError, describe as describeValue, isPositiveFinite, isPositiveInteger } from '../src/errors';

describe('argument errors', () => {
  it('name the owner, the parameter, what is accepted and what was given', () => {
    assert.equal(argumentError('Owner', 'size', 'a positive integer', 2.5).message, 'Owner: size must be a positive integer; got 2.5.');
  });

  it('describe values readably', () => {
    assert.deepEqual(
      [undefined, null, NaN, 'a', () => 1, [1, 2], tf.zeros([2, 3]), {}, new Map()].map(describeValue),
      ['undefined', 'null', 'NaN', '"a"', 'a function', 'an array of length 2', 'a tensor of shape [2, 3]', 'an object', 'a Map'],
    );
  });

  it('tell positive integers and positive finite numbers apart', () => {
    assert.deepEqual([1, 7, 0, -1, 2.5, NaN, Infinity, '3'].map(isPositiveInteger), [true, true, false, false, false, false, false, false]);
    assert.deepEqual([0.5, 1, 0, -1, NaN, Infinity].map(isPositiveFinite), [true, true, false, false, false, false]);
  });
});
