/**
 * The BatchNorm experiment: trains the MNIST CNN with every normalization at micro-batch sizes
 * 1-32, a fixed logical batch reached by gradient accumulation, and writes the records and
 * figures.
 *
 *     npm run experiment:norms                       # default size, a few minutes with fast kernels
 *     npm run experiment:norms -- --size large       # the whole training split, 3 seeds
 *     npm run experiment:norms -- --model mlp        # the MLP: no spatial positions to average over
 *     npm run experiment:norms -- --size tiny --out /tmp/norms
 *
 * Options: --size tiny|quick|default|large, --out <folder> (default build/experiments/norms;
 * results go to <folder>/<model>), --model cnn|mlp (default cnn), --seeds 0,1,2,
 * --normalizations batch,group (a subset, to spend a long run where it matters),
 * --sizes 1,2,4,32 (micro-batch sizes for every normalization), --backend <selectBackend preference>.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { BackendPreference, describeEnvironment, selectBackend } from '../src/backend/index';
import {
  ERROR_BAR_WIDTH,
  NORM_EXPERIMENT_PRESETS,
  NormExperimentArgs,
  NormExperimentProgress,
  NormExperimentResult,
  WU_HE_2018,
  runNormExperiment,
} from '../src/tutorial/index';

interface ScriptConfig {
  /** Preset size. */
  size: keyof typeof NORM_EXPERIMENT_PRESETS;
  /** Folder for records.json, summary.md and the figures: the --out folder, then the model's name. */
  out: string;
  /** Overrides of the preset. */
  overrides: NormExperimentArgs;
  /** Backend preference passed to selectBackend (undefined: its own default). */
  backend: BackendPreference | undefined;
}

const config = readConfig();

async function main(): Promise<void> {
  const environment = await selectBackend(config.backend);
  console.log(describeEnvironment(environment));
  const args: NormExperimentArgs = { ...NORM_EXPERIMENT_PRESETS[config.size], ...config.overrides, onProgress: printProgress };
  console.log(`\nexperiment size "${config.size}"; writing to ${config.out}\n`);
  const result = await runNormExperiment(args);
  write(result, environment);
  console.log(`\n${summaryTable(result)}`);
  console.log(`\nwall time ${(result.wallMs / 1000).toFixed(1)} s on ${result.backend}; records and figures in ${config.out}`);
}

function readConfig(): ScriptConfig {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'default' },
      out: { type: 'string', default: path.join('build', 'experiments', 'norms') },
      model: { type: 'string' },
      seeds: { type: 'string' },
      normalizations: { type: 'string' },
      sizes: { type: 'string' },
      backend: { type: 'string' },
    },
  });
  const size = values.size as ScriptConfig['size'];
  if (!(size in NORM_EXPERIMENT_PRESETS)) {
    throw new Error(`experimentNorms: --size must be one of ${Object.keys(NORM_EXPERIMENT_PRESETS).join(', ')}; got "${values.size}".`);
  }
  const overrides: NormExperimentArgs = {};
  if (values.model !== undefined) overrides.model = values.model as NormExperimentArgs['model'];
  if (values.seeds !== undefined) overrides.seeds = values.seeds.split(',').map(Number);
  // Checked by runNormExperiment, which names the option in its error.
  if (values.normalizations !== undefined) overrides.normalizations = values.normalizations.split(',') as NormExperimentArgs['normalizations'];
  if (values.sizes !== undefined) {
    overrides.microBatchSizes = values.sizes.split(',').map(Number);
    overrides.microBatchSizesBy = {};
  }
  if (overrides.model !== undefined && overrides.model !== 'cnn' && overrides.model !== 'mlp') {
    throw new Error(`experimentNorms: --model must be cnn or mlp; got "${overrides.model}".`);
  }
  const model = overrides.model ?? NORM_EXPERIMENT_PRESETS[size].model ?? 'cnn';
  return { size, out: path.join(values.out as string, model), overrides, backend: values.backend as BackendPreference | undefined };
}

function printProgress(event: NormExperimentProgress): void {
  const where = `[${event.run}/${event.runs}] ${event.normalization.padEnd(12)} microBatchSize ${String(event.microBatchSize).padStart(2)} seed ${event.seed}`;
  const clock = `${(event.elapsedMs / 1000).toFixed(0)} s`;
  if (event.kind === 'update') {
    console.log(`${where}  update ${event.updateStep}/${event.updates}  loss ${event.loss?.toFixed(3)}  (${clock})`);
  } else if (event.kind === 'run-end' && event.record) {
    const r = event.record;
    const recomputed = r.testErrorRecomputed === null ? '' : `, ${(100 * r.testErrorRecomputed).toFixed(1)}% with recomputed statistics`;
    const bounds = r.renormBounds === null ? '' : `, final rMax ${r.renormBounds.rMax.toFixed(2)} dMax ${r.renormBounds.dMax.toFixed(2)}`;
    console.log(
      `${where}  done: loss ${r.initialLoss.toFixed(3)} -> ${r.finalLoss.toFixed(3)}, test error ${(100 * r.testError).toFixed(1)}%${recomputed}${bounds}, ` +
        `${(r.trainMs / 1000).toFixed(1)} s training  (${clock})`,
    );
  }
}

function write(result: NormExperimentResult, environment: unknown): void {
  fs.mkdirSync(config.out, { recursive: true });
  const records = { command: commandLine(), environment, config: result.config, wallMs: result.wallMs, backend: result.backend, summary: result.summary, records: result.records };
  fs.writeFileSync(path.join(config.out, 'records.json'), JSON.stringify(records, null, 1));
  const figures: Record<string, unknown> = {
    'test-error': result.figures.testError,
    reference: result.figures.reference,
    ...(result.figures.recomputed ? { 'recomputed-statistics': result.figures.recomputed } : {}),
    ...(result.figures.statistics ? { 'statistics-deviation': result.figures.statistics } : {}),
    ...Object.fromEntries(Object.entries(result.figures.lossCurves).map(([n, f]) => [`loss-${n}`, f])),
  };
  fs.writeFileSync(path.join(config.out, 'figures.json'), JSON.stringify(figures));
  for (const [name, figure] of Object.entries(figures)) fs.writeFileSync(path.join(config.out, `${name}.plotly.json`), JSON.stringify(figure));
  fs.writeFileSync(path.join(config.out, 'summary.md'), `${summaryTable(result)}\n\nCommand: \`${commandLine()}\`; wall time ${(result.wallMs / 1000).toFixed(1)} s on ${result.backend}.\n`);
}

/** Test error (%) by normalization and micro-batch size, with Wu & He 2018 below for comparison. */
function summaryTable(result: NormExperimentResult): string {
  const sizes = [...new Set(result.summary.map((r) => r.microBatchSize))].sort((a, b) => b - a);
  const seeds = result.config.seeds.length;
  const header = `| test error % (mean ± ${ERROR_BAR_WIDTH} SE, ${seeds} seed${seeds > 1 ? 's' : ''}, ${result.config.testSize} test images) | ${sizes.map((m) => `microBatchSize ${m}`).join(' | ')} |`;
  const rule = `|---|${sizes.map(() => '---:').join('|')}|`;
  const rows = result.config.normalizations.map((n) => {
    const cells = sizes.map((m) => {
      const s = result.summary.find((r) => r.normalization === n && r.microBatchSize === m);
      if (s === undefined) return '';
      const recomputed = s.testErrorRecomputedMean === null ? '' : ` (${s.testErrorRecomputedMean.toFixed(1)})`;
      return `${s.testErrorMean.toFixed(1)} ± ${(ERROR_BAR_WIDTH * s.testErrorBar.standardError).toFixed(1)}${recomputed}`;
    });
    return `| ${n} | ${cells.join(' | ')} |`;
  });
  const bounds = result.records.filter((r) => r.renormBounds !== null).map((r) => r.renormBounds!);
  const reference = [
    '',
    `SE: the standard error of the seed mean combined with the binomial standard error of an error rate on ${result.config.testSize} test images (sqrt(p(1 - p)/n)).`,
    'In parentheses (batch, batch-renorm): the test error after the moving statistics were recomputed from training images in one batch.',
    ...(bounds.length
      ? [`batch-renorm bounds at the end of training: rMax ${Math.min(...bounds.map((b) => b.rMax))}-${Math.max(...bounds.map((b) => b.rMax))}, dMax ${Math.min(...bounds.map((b) => b.dMax))}-${Math.max(...bounds.map((b) => b.dMax))} over its runs.`]
      : []),
    '',
    `Reference, Wu & He 2018 (ResNet-50, ImageNet top-1 error %, by images per GPU ${WU_HE_2018.imagesPerGpu.join('/')}):`,
    `BatchNorm ${WU_HE_2018.batchNorm.join('/')}; GroupNorm ${WU_HE_2018.groupNorm.join('/')}.`,
  ];
  return [header, rule, ...rows, ...reference, ...deviationTable(result)].join('\n');
}

/** BatchNorm's statistics noise by micro-batch size: why the effect is strong or weak. */
function deviationTable(result: NormExperimentResult): string[] {
  const rows = result.summary
    .filter((s) => s.normalization === 'batch' && s.statisticsDeviationMean !== null)
    .sort((a, b) => a.microBatchSize - b.microBatchSize);
  if (rows.length === 0) return [];
  const lines = rows.map(
    (s) =>
      `| ${s.microBatchSize} | ${s.statisticsDeviationMean!.map((d) => `layer ${d.layer}: ${d.valuesPerStatistic} value${d.valuesPerStatistic > 1 ? "s" : ""}, ${d.meanShift.toFixed(3)} / ${d.scaleShift.toFixed(3)}`).join('; ')} |`,
  );
  return [
    '',
    'BatchNorm after training: values per statistic, and mean |mu_B - mu| / sigma / mean |sigma_B / sigma - 1| of micro-batches vs the population:',
    '',
    '| microBatchSize | per normalization layer |',
    '|---:|---|',
    ...lines,
  ];
}

function commandLine(): string {
  const extra = process.argv.slice(2).join(' ');
  return `npm run experiment:norms${extra ? ` -- ${extra}` : ''}`;
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
