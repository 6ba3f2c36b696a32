/**
 * The command line of `npm run bench` (scripts/bench/bench.ts), read in one place so that a
 * mistyped option stops the run at once with what is accepted, instead of minutes later (or
 * never: a misspelt model used to select no row and print empty tables).
 */

/** The models the bench knows. */
export const BENCH_MODELS = ['simpleNet', 'mlp', 'cnn'] as const;
export type ModelName = (typeof BENCH_MODELS)[number];

/** The head-to-head paths. */
export const BENCH_PATHS = ['wasm', 'native'] as const;

/** The other backends' preferences; `none` selects none of them. */
export const BENCH_BACKENDS = ['tensorflow', 'cpu', 'native-cpu', 'wasm-stock', 'cpu-stock', 'none'] as const;

/** What one run of the bench does, from its command line. */
export interface BenchArgs {
  /** `--quick`: short timings, SimpleNet and the MLP only. Default false. */
  quick: boolean;
  /** `--models=mlp,cnn`: only these models' rows. Default null (every model of the run). */
  models: ModelName[] | null;
  /** `--backends=wasm-stock,cpu`: only these other backends (`none`: none). Default null (all that load). */
  backends: string[] | null;
  /** `--paths=wasm` or `--paths=native`: which head-to-head paths run. Default null (both, native when built). */
  paths: string[] | null;
  /** `--rounds=N`: rounds in which ours and PyTorch take turns. Default null (5, or 2 with `--quick`). */
  rounds: number | null;
  /** False with `--no-torch`: no PyTorch peer. Default true. */
  torch: boolean;
  /** False with `--no-parallel`: no worker-thread bench (benchParallel.ts). Default true. */
  parallel: boolean;
  /**
   * `--every-core-only`: only the rows that use every core (the native window rows with their
   * worker options, and the parallel bench), so that a quiet minute is enough. Needs the native
   * path. Default false.
   */
  everyCoreOnly: boolean;
}

/** A command-line option the bench does not accept; its message says what it does accept. */
export class BenchArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchArgsError';
  }
}

const FLAGS = ['--quick', '--no-torch', '--no-parallel', '--every-core-only'];
const VALUED = ['models', 'backends', 'paths', 'rounds'];

/** The comma-separated values of `--name=a,b`, each checked against `accepted`; null when the option is absent. */
function listOption<T extends string>(argv: string[], name: string, accepted: readonly T[]): T[] | null {
  const arg = argv.find((a) => a.startsWith(`--${name}=`));
  if (arg === undefined) return null;
  const values = arg.slice(name.length + 3).split(',');
  const bad = values.filter((v) => !(accepted as readonly string[]).includes(v));
  if (bad.length > 0 || values.length === 0) throw new BenchArgsError(`--${name}: ${bad.map((v) => JSON.stringify(v)).join(', ')} not accepted; accepted: a comma-separated list of ${accepted.join(', ')}`);
  return values as T[];
}

/**
 * Reads the bench's arguments (`process.argv.slice(2)`); `nativeAvailable` says whether the
 * native addon loaded, which `--every-core-only` needs.
 *
 * @throws BenchArgsError on an unknown option, a value not accepted, or options that contradict.
 */
export function parseBenchArgs(argv: string[], nativeAvailable: boolean): BenchArgs {
  for (const a of argv) {
    const name = a.startsWith('--') && a.includes('=') ? a.slice(2, a.indexOf('=')) : null;
    if (FLAGS.includes(a) || (name !== null && VALUED.includes(name))) continue;
    const hint = FLAGS.includes(a.split('=')[0]) ? `${a.split('=')[0]} takes no value; ` : '';
    throw new BenchArgsError(`${JSON.stringify(a)} not accepted; ${hint}accepted: ${FLAGS.join(', ')}, ${VALUED.map((v) => `--${v}=…`).join(', ')}`);
  }
  const roundsArg = argv.find((a) => a.startsWith('--rounds='));
  const rounds = roundsArg === undefined ? null : Number(roundsArg.slice('--rounds='.length));
  if (rounds !== null && !(Number.isInteger(rounds) && rounds >= 1)) throw new BenchArgsError(`--rounds: ${JSON.stringify(roundsArg?.slice(9))} not accepted; accepted: an integer ≥ 1`);
  const args: BenchArgs = {
    quick: argv.includes('--quick'),
    models: listOption(argv, 'models', BENCH_MODELS),
    backends: listOption(argv, 'backends', BENCH_BACKENDS),
    paths: listOption(argv, 'paths', BENCH_PATHS),
    rounds,
    torch: !argv.includes('--no-torch'),
    parallel: !argv.includes('--no-parallel'),
    everyCoreOnly: argv.includes('--every-core-only'),
  };
  if (args.everyCoreOnly) {
    // The every-core rows are the native path's: wasm has no multi-core path to time.
    if (!nativeAvailable) throw new BenchArgsError('--every-core-only needs the native addon (npm run native:build): the every-core rows are the native window rows; accepted without it: the other options');
    if (args.paths !== null && !args.paths.includes('native')) throw new BenchArgsError('--every-core-only runs the native path only; accepted with it: --paths=native, or no --paths');
    if (args.backends !== null) throw new BenchArgsError('--every-core-only runs no other backend; accepted with it: --quick, --models=…, --rounds=…, --no-torch, --no-parallel, --paths=native');
  }
  return args;
}

/** What `scripts/bench/benchParallel.ts` accepts on its own command line. */
export interface ParallelBenchArgs {
  /** `--quick`: 2 timed windows, a smoke run. Default false. */
  quick: boolean;
  /** `--record`: keep the run for chapter 8 if its workers got two cores. Default false. */
  record: boolean;
  /** False with `--no-torch`: PyTorch's window is not timed. Default true. */
  torch: boolean;
}

const PARALLEL_FLAGS = ['--quick', '--record', '--no-torch'];

/**
 * Reads `benchParallel.ts`'s arguments. A misspelt `--record` used to run the whole bench and
 * keep nothing, silently; any option not listed is refused by name now.
 *
 * @throws BenchArgsError on an option it does not accept.
 */
export function parseParallelArgs(argv: string[]): ParallelBenchArgs {
  const bad = argv.find((a) => !PARALLEL_FLAGS.includes(a));
  if (bad !== undefined) throw new BenchArgsError(`${JSON.stringify(bad)} not accepted by benchParallel.ts; accepted: ${PARALLEL_FLAGS.join(', ')}`);
  return { quick: argv.includes('--quick'), record: argv.includes('--record'), torch: !argv.includes('--no-torch') };
}
