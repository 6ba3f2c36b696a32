/**
 * Numbers as a reader sees them in tables and sentences: a few significant digits and a unit,
 * never the 17 digits of a double (`0.0056086006713084585`).
 */

import { argumentError, checkOptions, isPositiveInteger } from '../../core/errors';

/** Options of {@link formatNumber}. */
export interface FormatNumberArgs {
  /** Significant digits of a number that is not an integer. Default 3. */
  digits?: number;
  /** A unit written after the number with a space (`'ms'`, `'MiB'`); `'%'` and `'×'` follow it directly. Default: none. */
  unit?: string;
}

const FORMAT_KEYS = ['digits', 'unit'] as const;

/**
 * A number with `digits` significant digits (default 3) and an optional unit:
 * `formatNumber(0.0056086006713084585)` is `'0.00561'`, `formatNumber(12.345, { unit: 'ms' })`
 * is `'12.3 ms'`, `formatNumber(1.56e-9)` is `'1.56e-9'`.
 *
 * - Integers up to a million print whole (`784`, `65536`): counts are exact.
 * - Other numbers of magnitude from 0.001 to below 10^digits keep trailing zeros (`'0.500'`), so
 *   a column shows its precision; larger ones are rounded to an integer (`'1235'`).
 * - Smaller than 0.001 or a million and up: `d.dde±n` (`'1.56e-9'`, `'1.20e7'`).
 * - `NaN` and infinities print as `'NaN'`, `'∞'`, `'-∞'`, zero as `'0'`.
 */
export function formatNumber(value: number, args: FormatNumberArgs = {}): string {
  const { digits = 3, unit } = checkOptions<FormatNumberArgs>('formatNumber', 'args', args, FORMAT_KEYS);
  if (typeof value !== 'number') throw argumentError('formatNumber', 'value', 'a number', value);
  if (!isPositiveInteger(digits) || digits > 17) throw argumentError('formatNumber', 'digits', 'an integer from 1 to 17', digits);
  if (unit !== undefined && typeof unit !== 'string') throw argumentError('formatNumber', 'unit', 'a string such as "ms", or left out', unit);
  const text = numberText(value, digits);
  if (!unit) return text;
  return /^[%×‰]/.test(unit) ? `${text}${unit}` : `${text} ${unit}`;
}

function numberText(v: number, digits: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '-∞';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (Number.isInteger(v) && a < 1e6) return String(v);
  if (a < 1e-3 || a >= 1e6) return v.toExponential(digits - 1).replace('e+', 'e');
  if (a >= 10 ** digits) return String(Math.round(v));
  const fixed = v.toPrecision(digits);
  // toPrecision turns to exponent form when rounding reaches 10^digits (999.6 with 3 digits).
  return fixed.includes('e') ? String(Math.round(v)) : fixed;
}
