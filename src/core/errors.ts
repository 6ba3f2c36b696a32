/**
 * Builds the error thrown for a bad argument. Every message has the same three parts so that a
 * user can fix the call without reading the source: who complained, which parameter, what is
 * accepted, and what was actually passed.
 *
 * @param owner The API that rejected the argument, e.g. `GradientAccumulator`.
 * @param parameter The parameter's name as the caller wrote it, e.g. `accumulationSteps`.
 * @param accepted What the parameter accepts, phrased to follow "must be".
 * @param got The value that was passed.
 */
export function argumentError(owner: string, parameter: string, accepted: string, got: unknown): Error {
  return new Error(`${owner}: ${parameter} must be ${accepted}; got ${describe(got)}.`);
}

/** Text that an error message shows as it is, for a `got` that is already a description. */
export class Verbatim {
  constructor(readonly text: string) {}
}

/** Marks a description (e.g. `the non-trainable variable "w"`) to be shown unquoted. */
export function verbatim(text: string): Verbatim {
  return new Verbatim(text);
}

/** A short, human-readable rendering of any value for an error message. */
export function describe(value: unknown): string {
  if (value instanceof Verbatim) return value.text;
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  // A long string (a whole JSON checkpoint passed by mistake, say) is summarized, never echoed.
  if (typeof value === 'string') return value.length > 60 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (typeof value === 'object') {
    const shape = (value as { shape?: unknown }).shape;
    if (Array.isArray(shape)) return `a tensor of shape [${shape.join(', ')}]`;
    const name = (value as object).constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return String(value);
}

/** True for integers 1, 2, 3, …; false for 0, negatives, fractions, NaN and infinities. */
export function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** True for finite numbers greater than zero. */
export function isPositiveFinite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/**
 * Refuses option keys that no parameter reads, so that a typo such as `clipnorm: 1` fails
 * loudly instead of silently meaning "no clipping".
 *
 * @param owner The API, e.g. `GradientAccumulator`.
 * @param parameter The options parameter's name, e.g. `args`.
 * @param value The options object (already known to be an object).
 * @param accepted Every key the API reads.
 */
export function checkKeys(owner: string, parameter: string, value: object, accepted: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!accepted.includes(key)) {
      const near = accepted.find((a) => a.toLowerCase() === key.toLowerCase());
      const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
      throw new Error(`${owner}: ${parameter} has an unknown key "${key}"${hint}; the accepted keys are ${accepted.map((a) => `"${a}"`).join(', ')}.`);
    }
  }
}

/** Checks that an options argument is an object (or undefined, read as `{}`) with only known keys. */
export function checkOptions<T extends object>(owner: string, parameter: string, value: unknown, accepted: readonly string[]): T {
  if (value === undefined) return {} as T;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argumentError(owner, parameter, `an object with the keys ${accepted.map((a) => `"${a}"`).join(', ')} (all optional), or left out`, value);
  }
  checkKeys(owner, parameter, value, accepted);
  return value as T;
}

/** Checks an optional boolean option, so that `{ keepOptimizer: 1 }` or `{ flush: 'no' }` is refused instead of read as truthy or falsy. */
export function checkBoolean(owner: string, parameter: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw argumentError(owner, parameter, 'true, false or left out', value);
  return value;
}
