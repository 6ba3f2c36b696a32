import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import fc from 'fast-check';
import { installFastKernels, tfjsBackendOf, uninstallFastKernels, weightCacheSize } from '../../../src/backend/kernels';
import { fcParameters, FC_SEED } from '../../helpers';
import { ParityBackend, PARITY_BACKENDS, randomTensor, relativeError, TOLERANCE } from '../../helpers/kernelParity';

/**
 * The machinery of the kernel fuzz (test/backend/kernelFuzz.test.ts): a family of generated
 * cases per kernel, each case run on stock tfjs `cpu` (or a plain-loop reference where stock tfjs
 * is itself wrong) and on every kernel set the project registers (`cpu`, `wasm`, and, with the
 * addon built, `native` and `native-cpu`), compared value by value.
 *
 * A failure throws an error that names the family (its kernels), the kernel set, the case's shapes
 * and attributes, the output and the worst element, so fast-check's report, after shrinking to
 * the smallest case that still fails, reads as a bug report.
 */

/** The outputs of one run: values and shape of each tensor, in order. */
export type Outputs = { data: Float32Array; shape: number[] }[];

/** One kernel family: how to generate its cases and how to run one. */
export interface Family<C> {
  /** What is tested, e.g. `"Conv2DBackpropFilter (the filter gradient of tf.conv2d)"`. */
  name: string;
  /** The kernels (or `"gradient of X"`) a case runs, for the coverage check. */
  kernels: readonly string[];
  /** The generated cases (shrinking towards small shapes and plain attributes). */
  cases: fc.Arbitrary<C>;
  /** The case's shapes and attributes, for the failure message. */
  describe(c: C): string;
  /** Computes the outputs on the current backend (inside `tf.tidy`; tensors it returns are read and disposed). */
  run(c: C): tf.Tensor | tf.Tensor[];
  /**
   * The expected outputs from plain loops, where stock tfjs `cpu` is itself wrong for some cases;
   * null to use stock `cpu` (`run` on it, without the project's kernels).
   */
  reference?(c: C): Outputs | null;
  /** Kernel sets this family runs on. Default: every set ({@link FUZZ_SETS}). */
  sets?: readonly ParityBackend[];
  /** Allowed error relative to the reference's largest magnitude. Default {@link TOLERANCE}. */
  tolerance?: number;
  /**
   * The magnitude errors are relative to when the reference's own is smaller (a sum of inputs
   * of this size that cancels to nearly 0 carries their rounding), per output. Default 0.
   */
  scaleFloor?(c: C, output: number): number;
  /**
   * Whether a case keeps backend memory alive on purpose (a trainable variable's cached
   * transposed or flipped copy, freed once the variable is): then only engine tensors are counted
   * for leaks, not backend buffers.
   */
  keepsDerivedWeights?: boolean;
}

/** The kernel sets the fuzz runs each case on. */
export const FUZZ_SETS: readonly ParityBackend[] = PARITY_BACKENDS;

/** Where the reference comes from, for messages. */
const STOCK = 'stock cpu';

/**
 * Runs per family: `FC_RUNS=n` (or `--runs=n` / `--runs n` on the command line) for a deep run;
 * by default each family's own count, which keeps the whole fuzz near a minute on an idle 2-core
 * machine.
 */
export function fuzzRuns(familyDefault: number): number {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === '--runs' || a.startsWith('--runs='));
  const raw = i < 0 ? process.env.FC_RUNS : argv[i].startsWith('--runs=') ? argv[i].slice('--runs='.length) : argv[i + 1];
  if (raw === undefined || raw === '') return familyDefault;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`kernel fuzz: FC_RUNS / --runs must be a positive integer; got ${JSON.stringify(raw)}.`);
  return runs;
}

/** The seed the fuzz runs with (`FC_SEED`, as every property test of the project). */
export const FUZZ_SEED = FC_SEED;

/** Switches to stock cpu: no kernel of the project on any backend, no gradient replaced. */
async function useStockCpu(): Promise<void> {
  uninstallFastKernels();
  await tf.setBackend('cpu');
}

/** Switches to a kernel set: its tfjs backend with the project's kernels for it. */
async function useSet(set: ParityBackend): Promise<void> {
  await tf.setBackend(tfjsBackendOf(set));
  installFastKernels(set);
}

function backendBuffers(): number {
  return (tf.backend() as unknown as { numDataIds(): number }).numDataIds();
}

/** Runs a family's case on the current backend and reads its outputs; counts what it leaked. */
async function outputsOf<C>(family: Family<C>, c: C): Promise<{ outputs: Outputs; leaked: string | null }> {
  // Frees the cached copies of weights disposed since (so that they do not count as freed here).
  weightCacheSize();
  const tensors = tf.memory().numTensors;
  const buffers = backendBuffers();
  const out = tf.tidy(() => family.run(c));
  const list = Array.isArray(out) ? out : [out];
  const outputs: Outputs = [];
  try {
    for (const t of list) outputs.push({ data: Float32Array.from(await t.data()), shape: t.shape.slice() });
  } finally {
    tf.dispose(list);
  }
  const tensorsLeaked = tf.memory().numTensors - tensors;
  const buffersLeaked = family.keepsDerivedWeights ? 0 : backendBuffers() - buffers;
  const leaked = tensorsLeaked !== 0 || buffersLeaked !== 0 ? `${tensorsLeaked} tensors and ${buffersLeaked} backend buffers` : null;
  return { outputs, leaked };
}

/** The first index where two outputs differ most, for the message. */
function worstIndex(actual: Float32Array, expected: Float32Array): number {
  let worst = -1;
  let most = -1;
  for (let i = 0; i < expected.length; i++) {
    const same = Number.isNaN(expected[i]) ? Number.isNaN(actual[i]) : actual[i] === expected[i];
    if (same) continue;
    const d = Number.isFinite(actual[i] - expected[i]) ? Math.abs(actual[i] - expected[i]) : Infinity;
    if (d > most) {
      most = d;
      worst = i;
    }
  }
  return worst;
}

/**
 * Runs one case: the reference, then every kernel set, and throws an error naming the family,
 * the set, the case and the first disagreement (shape, value or leak).
 */
export async function checkCase<C>(family: Family<C>, c: C): Promise<void> {
  const label = (set: string) => `${family.name} on ${set}: ${family.describe(c)}`;
  const plain = family.reference?.(c) ?? null;
  let expected: Outputs;
  const source = plain ? 'the plain-loop reference' : STOCK;
  if (plain) {
    expected = plain;
  } else {
    await useStockCpu();
    try {
      expected = (await outputsOf(family, c)).outputs;
    } catch (e) {
      throw new Error(`${label(STOCK)}: the reference threw: ${(e as Error).message}`);
    }
  }
  for (const set of family.sets ?? FUZZ_SETS) {
    await useSet(set);
    let result: Awaited<ReturnType<typeof outputsOf>>;
    try {
      result = await outputsOf(family, c);
    } catch (e) {
      throw new Error(`${label(set)}: threw ${(e as Error).message.split('\n')[0]}`);
    }
    const { outputs, leaked } = result;
    if (outputs.length !== expected.length) throw new Error(`${label(set)}: ${outputs.length} outputs, ${source} has ${expected.length}`);
    outputs.forEach((a, i) => {
      const e = expected[i];
      if (a.shape.join() !== e.shape.join()) throw new Error(`${label(set)}: output ${i} has shape [${a.shape}], ${source} [${e.shape}]`);
      const err = relativeError(a.data, e.data, family.scaleFloor?.(c, i) ?? 0);
      if (!(err <= (family.tolerance ?? TOLERANCE))) {
        const at = worstIndex(a.data, e.data);
        throw new Error(
          `${label(set)}: output ${i} [${e.shape}] differs from ${source} by ${err.toExponential(2)} (relative to its largest value); ` +
            `first worst at flat index ${at}: ${a.data[at]} instead of ${e.data[at]}`,
        );
      }
    });
    if (leaked) throw new Error(`${label(set)}: leaked ${leaked}`);
  }
}

/** Runs a family's property with the fuzz seed, `runs` cases, shrinking a failure. */
export async function fuzz<C>(family: Family<C>, runs: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(family.cases, (c) => checkCase(family, c)),
    fcParameters(fuzzRuns(runs)),
  );
}

/** Deterministic values in [-1, 1) for a tensor of `shape` (seeded, independent of any backend): the parity tests' own. */
export const valuesTensor = randomTensor;

/** `[a,b,c]` for messages. */
export function dims(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

/** A dimension size from 1 (or 0 with `zero`) to `max`: odd sizes, sizes off the SIMD widths and 1 alike. */
export function dim(max: number, zero = false): fc.Arbitrary<number> {
  return fc.integer({ min: zero ? 0 : 1, max });
}

/** The registered kernels (and gradients) no family runs. */
export function uncovered(registered: readonly string[], families: readonly Pick<Family<never>, 'kernels'>[]): string[] {
  const covered = new Set(families.flatMap((f) => f.kernels));
  return [...new Set(registered)].filter((k) => !covered.has(k)).sort();
}
