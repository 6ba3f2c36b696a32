import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { argumentError, checkKeys, checkOptions, describe as describeValue, isPositiveFinite, isPositiveInteger } from '../../src/core/errors';

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

describe('option objects', () => {
  it('refuse unknown keys, naming the key, a near miss, and the accepted keys', () => {
    assert.throws(() => checkKeys('Owner', 'args', { clipnorm: 1 }, ['clipNorm', 'nonFinite']), {
      message: 'Owner: args has an unknown key "clipnorm" (did you mean "clipNorm"?); the accepted keys are "clipNorm", "nonFinite".',
    });
    assert.doesNotThrow(() => checkKeys('Owner', 'args', { clipNorm: 1 }, ['clipNorm']));
    assert.deepEqual(checkOptions('Owner', 'options', undefined, ['a']), {});
    assert.throws(() => checkOptions('Owner', 'options', null, ['a']), /options must be an object/);
  });

  it('summarize long strings instead of echoing them', () => {
    const payload = JSON.stringify({ values: new Array(10000).fill(0.5) });
    assert.equal(describeValue(payload), `a string of ${payload.length} characters`);
    assert.equal(describeValue('short'), '"short"');
  });
});
