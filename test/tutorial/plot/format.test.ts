import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatNumber } from '../../../src/tutorial/plot/format';

describe('formatNumber', () => {
  it('prints three significant digits, never the 17 of a double', () => {
    assert.equal(formatNumber(0.0056086006713084585), '0.00561');
    assert.equal(formatNumber(1.5), '1.50', 'trailing zeros show the precision');
    assert.equal(formatNumber(0.1 + 0.2), '0.300');
    assert.equal(formatNumber(123.456), '123');
    assert.equal(formatNumber(999.6), '1000', 'rounding up to 10^digits stays out of exponent form');
    assert.equal(formatNumber(1234.5), '1235');
  });

  it('prints integers whole, small and huge numbers with an exponent, and the special values', () => {
    assert.deepEqual([784, 65536, -3, 0].map((v) => formatNumber(v)), ['784', '65536', '-3', '0']);
    assert.deepEqual([1.56e-9, -0.00012345, 12_000_000.5, 3e7].map((v) => formatNumber(v)), ['1.56e-9', '-1.23e-4', '1.20e7', '3.00e7']);
    assert.deepEqual([NaN, Infinity, -Infinity].map((v) => formatNumber(v)), ['NaN', '∞', '-∞']);
  });

  it('writes the unit after a space, and % or × right after the number', () => {
    assert.equal(formatNumber(12.345, { unit: 'ms' }), '12.3 ms');
    assert.equal(formatNumber(0.4217, { unit: 'MiB', digits: 2 }), '0.42 MiB');
    assert.equal(formatNumber(42.123, { unit: '%' }), '42.1%');
    assert.equal(formatNumber(1.9, { unit: '×' }), '1.90×');
  });

  it('refuses bad input, naming the parameter (negative cases)', () => {
    assert.throws(() => formatNumber('1' as never), /formatNumber: value must be a number; got "1"/);
    assert.throws(() => formatNumber(1, { digits: 0 }), /formatNumber: digits must be an integer from 1 to 17; got 0/);
    assert.throws(() => formatNumber(1, { digits: 2.5 }), /digits must be an integer/);
    assert.throws(() => formatNumber(1, { unit: 3 as never }), /formatNumber: unit must be a string/);
    assert.throws(() => formatNumber(1, { units: 'ms' } as never), /formatNumber: args has an unknown key "units"; the accepted keys are "digits", "unit"/);
  });
});
