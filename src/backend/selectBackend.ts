import * as tf from '@tensorflow/tfjs';
import { argumentError } from '../core/errors';
import { loadOptionalPeer, MissingPeerDependencyError } from '../core/peers';
import { FastKernelBackend, installedFastKernels, installFastKernels, KernelReplacement, tfjsBackendOf, uninstallFastKernels } from './kernels';
import { checkNativeThreads, loadNativeBlas, NativeBlasInfo, NativeStatus, setNativeThreads } from './kernels/nativeBlas';

/**
 * Choosing the fastest tfjs backend this machine can run, and saying what was chosen.
 *
 * Order of preference: `tensorflow` (tfjs-node, native TensorFlow) when
 * `require('@tensorflow/tfjs-node')` works; else `native` (the wasm backend with this project's
 * kernels and its matrix products and convolution filter gradients in the system CBLAS, on the
 * wasm heap) when the optional native addon was built; else `wasm` (XNNPACK) with this project's kernels registered; else `cpu` (pure JS)
 * with this project's replacements for its slowest kernels.
 * A backend that fails to start costs one line on the notice channel and the next one is tried;
 * nothing throws unless `strict` is set or no backend at all can start. One that is simply not
 * there (tfjs-node or the wasm backend not installed: optional peer dependencies; the native
 * addon not built) costs no line unless it was asked for by name: the report says why, and a
 * program that calls `selectBackend()` on every run prints nothing on a machine without them.
 */

/**
 * What `selectBackend` may be asked for:
 * - `"auto"` (default): the first of tensorflow, native, wasm, cpu that starts;
 * - `"tensorflow"`: tfjs-node (falls through to native, wasm, then cpu, with a notice, unless `strict`);
 * - `"native"`: wasm with the native CBLAS kernels (falls through to wasm, then cpu);
 * - `"native-cpu"`: the cpu backend with the native CBLAS kernels, products and every
 *   convolution kernel (for comparisons: the rest of a step is slower on cpu; falls through to cpu);
 * - `"wasm"`: wasm with this project's kernels (falls through to cpu unless `strict`);
 * - `"cpu"`: pure-JS cpu with this project's kernels;
 * - `"wasm-stock"`, `"cpu-stock"`: the backend with tfjs's own kernels only (for comparisons;
 *   stock wasm cannot train CNNs: it has no Conv2DBackpropFilter).
 */
export type BackendPreference = 'auto' | 'tensorflow' | 'native' | 'native-cpu' | 'wasm' | 'cpu' | 'wasm-stock' | 'cpu-stock';

/** Every accepted preference, in the order above. */
export const BACKEND_PREFERENCES: readonly BackendPreference[] = ['auto', 'tensorflow', 'native', 'native-cpu', 'wasm', 'cpu', 'wasm-stock', 'cpu-stock'];

/** The environment variable read when `selectBackend` gets no argument. */
export const BACKEND_ENV_VAR = 'TFJS_ACCUMULATE_BACKEND';

/** Options of {@link selectBackend}. */
export interface SelectBackendArgs {
  /**
   * Where the one-line notices go (a backend missing or failing to start, a fall-through).
   * Default `console.warn`.
   */
  onNotice?: (message: string) => void;
  /** Throw instead of falling through when the requested backend cannot start. Default false. */
  strict?: boolean;
  /** The environment to read `TFJS_ACCUMULATE_BACKEND` from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * Loads tfjs-node; it must register the `tensorflow` backend. Default
   * `require('@tensorflow/tfjs-node')`. Replace it to test a broken installation, or to load
   * tfjs-node from elsewhere.
   */
  loadTfjsNode?: () => unknown;
  /**
   * Loads the wasm backend package. Default `require('@tensorflow/tfjs-backend-wasm')`. Replace
   * it to test a project where it is not installed.
   */
  loadWasm?: () => unknown;
  /**
   * Loads the native addon. Default: this package's build (`loadNativeBlas()`). Replace it to
   * test a machine where it was not built.
   */
  loadNative?: () => NativeStatus;
  /**
   * The BLAS threads of the native path: 1 (default; what the bench compares against
   * one-thread PyTorch, and what each parallel worker wants), up to the number of cores, or
   * `"all"` for every core. Ignored when another backend is chosen.
   */
  nativeThreads?: number | 'all';
}

/** What `selectBackend` chose and what this machine offers: the "environment" of a run. */
export interface EnvironmentReport {
  /** The active backend: `"tensorflow"`, `"wasm"` or `"cpu"`. */
  backend: string;
  /** True when this project's kernels are registered for the active backend. */
  fastKernels: boolean;
  /** The preference that was applied. */
  requested: BackendPreference;
  /** Where `requested` came from. */
  source: 'argument' | 'environment' | 'default';
  /** Package versions (null when a package is not loaded). */
  versions: { tfjs: string; tfjsCore: string; tfjsBackendWasm: string | null; tfjsNode: string | null };
  /** tfjs-node: whether it loaded, and if not, why (the first line of the error). */
  tfjsNode: { available: boolean; reason: string | null };
  /**
   * The wasm backend's features (null when wasm was not tried), and why it was not used when it
   * was tried and did not start (else null), e.g. its package not installed.
   */
  wasm: { simd: boolean | null; threads: boolean | null; threadsCount: number | null; reason: string | null };
  /**
   * The native addon: whether it loaded (else why not), where from, and its BLAS (name,
   * OpenBLAS's config string with its version, core type, threads in use); null fields when not
   * loaded. `active` is true when the native kernels are the ones running.
   */
  native: { available: boolean; active: boolean; reason: string | null; path: string | null; info: NativeBlasInfo | null };
  /** The kernels this project replaced or added on the active backend. */
  kernelsReplaced: KernelReplacement[];
  /** The notices emitted while selecting (also sent to `onNotice`). */
  notices: string[];
  /**
   * The JS runtime. Under Deno, `node` is the Node version Deno's compatibility layer reports, and
   * `deno` is Deno's own version (null under Node).
   */
  runtime: { node: string | null; deno: string | null; platform: string | null; cpus: number | null };
}

const OWNER = 'selectBackend';
const TFJS_NODE = '@tensorflow/tfjs-node';
const TFJS_WASM = '@tensorflow/tfjs-backend-wasm';

/**
 * Activates the fastest available backend (or the one asked for) and reports the environment.
 *
 * ```ts
 * const env = await selectBackend();          // tensorflow, else wasm + kernels, else cpu + kernels
 * console.log(describeEnvironment(env));
 * await selectBackend('cpu-stock');           // tfjs's own cpu kernels, for comparison
 * ```
 *
 * With no argument the preference comes from the `TFJS_ACCUMULATE_BACKEND` environment
 * variable, else `"auto"`.
 *
 * @param preference One of {@link BACKEND_PREFERENCES}. Default: the environment variable, else `"auto"`.
 */
export async function selectBackend(preference?: BackendPreference, args: SelectBackendArgs = {}): Promise<EnvironmentReport> {
  if (args === null || typeof args !== 'object') throw argumentError(OWNER, 'args', 'an object { onNotice, strict, env, loadTfjsNode, loadWasm, loadNative, nativeThreads } or left out', args);
  const threads = checkNativeThreads(OWNER, 'nativeThreads', args.nativeThreads ?? 1, { optional: true });
  const env = args.env ?? (typeof process !== 'undefined' ? process.env : {});
  let requested: BackendPreference;
  let source: EnvironmentReport['source'];
  const accepted = `one of ${BACKEND_PREFERENCES.map((p) => `"${p}"`).join(', ')}`;
  if (preference !== undefined) {
    if (!BACKEND_PREFERENCES.includes(preference)) throw argumentError(OWNER, 'preference', `${accepted}, or left out`, preference);
    requested = preference;
    source = 'argument';
  } else if (env[BACKEND_ENV_VAR] !== undefined && env[BACKEND_ENV_VAR] !== '') {
    const value = env[BACKEND_ENV_VAR] as string;
    if (!BACKEND_PREFERENCES.includes(value as BackendPreference)) {
      throw argumentError(OWNER, `the ${BACKEND_ENV_VAR} environment variable`, `${accepted}, or unset`, value);
    }
    requested = value as BackendPreference;
    source = 'environment';
  } else {
    requested = 'auto';
    source = 'default';
  }

  const notices: string[] = [];
  const notice = (message: string): void => {
    notices.push(message);
    (args.onNotice ?? ((m: string) => console.warn(m)))(message);
  };
  const state: SelectionState = {
    tfjsNode: { available: false, reason: 'not tried' },
    wasm: { simd: null, threads: null, threadsCount: null, reason: null },
    native: { available: false, active: false, reason: 'not tried', path: null, info: null },
  };

  // The chain from the requested backend down; stock variants do not fall through.
  const chains: Record<BackendPreference, Attempt[]> = {
    auto: ['tensorflow', 'native', 'wasm', 'cpu'],
    tensorflow: ['tensorflow', 'native', 'wasm', 'cpu'],
    native: ['native', 'wasm', 'cpu'],
    'native-cpu': ['native-cpu', 'cpu'],
    wasm: ['wasm', 'cpu'],
    cpu: ['cpu'],
    'wasm-stock': ['wasm-stock'],
    'cpu-stock': ['cpu-stock'],
  };
  const chain = chains[requested];
  let chosen: Attempt | null = null;
  for (let i = 0; i < chain.length; i++) {
    const attempt = chain[i];
    const failure = await tryBackend(attempt, args, state);
    if (failure === null) {
      chosen = attempt;
      break;
    }
    const next = chain[i + 1];
    const explicit = attempt === requested;
    if (next === undefined || (explicit && args.strict)) {
      throw new Error(`${OWNER}: the ${attempt} backend could not start: ${failure.reason}`);
    }
    // What is not there (an optional package not installed, the addon not built) is the normal
    // case on most machines: unless asked for by name, the report says why (report.tfjsNode,
    // report.wasm, report.native) and no notice is printed on every run.
    if (failure.absent && !explicit) continue;
    notice(`tfjs-accumulate: ${attempt} backend unavailable (${failure.reason}); trying ${next}.`);
  }
  const backend = tf.getBackend();
  const fast = chosen === 'wasm' || chosen === 'cpu' || chosen === 'native' || chosen === 'native-cpu';
  if ((chosen === 'native' || chosen === 'native-cpu') && state.native.info !== null) {
    state.native.active = true;
    state.native.info.threads = setNativeThreads(threads);
  }
  return {
    backend,
    fastKernels: fast,
    requested,
    source,
    versions: {
      tfjs: tf.version.tfjs,
      tfjsCore: tf.version_core,
      tfjsBackendWasm: loadedVersion(TFJS_WASM, 'version_wasm'),
      tfjsNode: (tf.version as Record<string, string>)['tfjs-node'] ?? null,
    },
    tfjsNode: state.tfjsNode,
    wasm: state.wasm,
    native: state.native,
    kernelsReplaced: fast ? installedFastKernels(backend) : [],
    notices,
    runtime: {
      node: typeof process !== 'undefined' && process.versions?.node ? process.versions.node : null,
      deno: typeof process !== 'undefined' && process.versions?.deno ? process.versions.deno : null,
      platform: typeof process !== 'undefined' ? `${process.platform} ${process.arch}` : null,
      cpus: cpuCount(),
    },
  };
}

type Attempt = 'tensorflow' | 'native' | 'native-cpu' | 'wasm' | 'cpu' | 'wasm-stock' | 'cpu-stock';

interface SelectionState {
  tfjsNode: EnvironmentReport['tfjsNode'];
  wasm: EnvironmentReport['wasm'];
  native: EnvironmentReport['native'];
}

/** Why a backend did not start: one line, and whether it is simply not there (see the loop above). */
interface Failure {
  reason: string;
  absent: boolean;
}

/** Loads an optional backend package; a `MissingPeerDependencyError` says how to install it. */
function loadBackendPackage(name: string, load: (() => unknown) | undefined): unknown {
  // tfjs's backends must be the very version of the tfjs in use.
  return loadOptionalPeer({ name, install: tf.version.tfjs, neededBy: `${OWNER} (tfjs-accumulate/backend)`, load: load ?? (() => dynamicRequire(name)) });
}

/** Starts one backend; returns null on success, else why not. */
async function tryBackend(attempt: Attempt, args: SelectBackendArgs, state: SelectionState): Promise<Failure | null> {
  const failed = (reason: string, absent = false): Failure => ({ reason, absent });
  try {
    if (attempt === 'tensorflow') {
      try {
        loadBackendPackage(TFJS_NODE, args.loadTfjsNode);
      } catch (e) {
        const absent = e instanceof MissingPeerDependencyError;
        state.tfjsNode = { available: false, reason: absent ? `not installed (${e.install})` : firstLine(e) };
        return failed(absent ? `${TFJS_NODE} is not installed` : `${TFJS_NODE} did not load: ${firstLine(e)}`, absent);
      }
      if (tf.findBackendFactory('tensorflow') === null) {
        state.tfjsNode = { available: false, reason: 'loaded, but no "tensorflow" backend was registered' };
        return failed(state.tfjsNode.reason as string);
      }
      if (!(await setBackendQuietly('tensorflow'))) {
        state.tfjsNode = { available: false, reason: 'its backend failed to initialize' };
        return failed(state.tfjsNode.reason as string);
      }
      state.tfjsNode = { available: true, reason: null };
      return null;
    }
    if (attempt === 'native' || attempt === 'native-cpu') {
      const status = (args.loadNative ?? (() => loadNativeBlas()))();
      if (!status.available) {
        state.native = { ...state.native, reason: status.reason };
        return failed(`the native addon ${status.reason}`, true);
      }
      state.native = { available: true, active: false, reason: null, path: status.path, info: status.addon.info() };
    }
    const set: FastKernelBackend = attempt === 'native' || attempt === 'native-cpu' ? attempt : attempt.startsWith('wasm') ? 'wasm' : 'cpu';
    const name = tfjsBackendOf(set);
    if (name === 'wasm') {
      let wasm: { getThreadsCount(): number };
      try {
        wasm = loadBackendPackage(TFJS_WASM, args.loadWasm) as typeof wasm;
      } catch (e) {
        if (!(e instanceof MissingPeerDependencyError)) throw e;
        state.wasm.reason = `not installed (${e.install})`;
        return failed(`${TFJS_WASM} is not installed (${e.install})`, true);
      }
      state.wasm.simd = Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'));
      state.wasm.threads = Boolean(await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'));
      if (!(await setBackendQuietly('wasm'))) {
        state.wasm.reason = 'its WebAssembly module failed to initialize';
        return failed(state.wasm.reason);
      }
      state.wasm.reason = null;
      state.wasm.threadsCount = wasm.getThreadsCount();
    } else if (!(await setBackendQuietly('cpu'))) {
      return failed('the cpu backend failed to initialize');
    } else {
      // tfjs's cpu backend prints a multi-line "install tfjs-node" banner on its first tensor;
      // the report already says whether tfjs-node loaded and why not.
      (tf.backend() as unknown as { firstUse?: boolean }).firstUse = false;
    }
    if (attempt.endsWith('-stock')) uninstallFastKernels(name);
    else installFastKernels(set);
    return null;
  } catch (e) {
    return failed(firstLine(e));
  }
}

/** `tf.setBackend` without its multi-line console error when initialization fails. */
async function setBackendQuietly(name: string): Promise<boolean> {
  try {
    return await tf.setBackend(name);
  } catch {
    return false;
  }
}

/** `require` hidden from bundlers, so that an absent optional package is a run-time fact. */
function dynamicRequire(name: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(name);
}

function loadedVersion(name: string, field: string): string | null {
  try {
    const resolved = require.resolve(name);
    const mod = require.cache[resolved]?.exports as Record<string, unknown> | undefined;
    return typeof mod?.[field] === 'string' ? (mod[field] as string) : null;
  } catch {
    return null;
  }
}

function cpuCount(): number | null {
  try {
    return (require('os') as typeof import('os')).cpus().length;
  } catch {
    return null;
  }
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0].trim();
}

/**
 * The report as a few lines of text, for a log or the notebooks' "Environment" chapter.
 */
export function describeEnvironment(report: EnvironmentReport): string {
  const yesNo = (v: boolean | null): string => (v === null ? 'not checked' : v ? 'yes' : 'no');
  const lines = [
    `backend: ${report.backend}${report.fastKernels ? (report.native.active ? ' + tfjs-accumulate native kernels' : ' + tfjs-accumulate kernels') : ''} (requested "${report.requested}" by ${report.source})`,
    `tfjs ${report.versions.tfjs} (core ${report.versions.tfjsCore})` +
      (report.versions.tfjsBackendWasm ? `, tfjs-backend-wasm ${report.versions.tfjsBackendWasm}` : '') +
      (report.versions.tfjsNode ? `, tfjs-node ${report.versions.tfjsNode}` : ''),
    `tfjs-node: ${report.tfjsNode.available ? 'loaded' : `not used (${report.tfjsNode.reason})`}`,
    report.wasm.reason !== null && report.wasm.simd === null
      ? `wasm: not used (${report.wasm.reason})`
      : `wasm: SIMD ${yesNo(report.wasm.simd)}, threads ${yesNo(report.wasm.threads)}` + (report.wasm.threadsCount !== null ? ` (${report.wasm.threadsCount} in use)` : ''),
    `native: ${describeNative(report.native)}`,
    `runtime: ${report.runtime.deno ? `Deno ${report.runtime.deno} (Node compatibility ${report.runtime.node ?? 'n/a'})` : `Node ${report.runtime.node ?? 'n/a'}`}` +
      ` on ${report.runtime.platform ?? 'n/a'}, ${report.runtime.cpus ?? '?'} CPUs`,
  ];
  if (report.kernelsReplaced.length > 0) {
    lines.push(`kernels replaced (${report.kernelsReplaced.length}):`);
    for (const k of report.kernelsReplaced) lines.push(`  ${k.kernel} [${k.backend}]: ${k.description}`);
  }
  for (const n of report.notices) lines.push(`notice: ${n}`);
  return lines.join('\n');
}

/** One line on the native addon: its BLAS, version, core type and threads, or why it is not used. */
function describeNative(native: EnvironmentReport['native']): string {
  if (!native.available || native.info === null) return `not used (${native.reason})`;
  const info = native.info;
  const parts = [
    info.config ?? info.blas,
    info.corename !== null ? `core ${info.corename}` : null,
    info.threads !== null ? `${info.threads} thread${info.threads === 1 ? '' : 's'}` : 'threads chosen by the BLAS',
  ].filter((p) => p !== null);
  return `${native.active ? 'in use' : 'loaded, not in use'}: ${parts.join(', ')}`;
}
