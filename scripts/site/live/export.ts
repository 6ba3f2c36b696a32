/**
 * The "run it in your browser" blocks of the site (chapters 3 and 4). scripts/site/exportSite.ts
 * calls {@link liveBlocks} once per export: it bundles ./loader.ts (small, on every chapter with
 * a block) and ./run.ts (tfjs and the library, loaded only when the reader asks) with esbuild
 * into `assets/live/`, and returns the block's HTML for each page.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

/** Chapters with a block, by the notebook's file name prefix: what runs and what it says. */
const BLOCKS: Record<string, { kind: string; text: string }> = {
  '03-': {
    kind: 'accumulation',
    text: 'Four micro-batches of 16 through <code>GradientAccumulator</code> against one SGD step on all 64, as above, on the best backend your browser offers (WebGL, else cpu).',
  },
  '04-': {
    kind: 'training-loop',
    text: "The article's training loop: 20 micro-batches of 16, an update after every 4th, on the best backend your browser offers (WebGL, else cpu).",
  },
};

/** Built bundles, kept for the process: the exporter may run several times (tests). */
let built: Map<string, Uint8Array> | undefined;

function bundles(): Map<string, Uint8Array> {
  if (built) return built;
  const result = esbuild.buildSync({
    entryPoints: { loader: path.join(__dirname, 'loader.ts'), run: path.join(__dirname, 'run.ts') },
    outdir: 'live',
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    // The tutorial entry also exports the worker-thread measurement (src/parallel), which imports
    // Node's modules; the blocks never call it, so tree-shaking drops it. Left external, any
    // such import that survived would show in the bundle, and the live block test would fail.
    external: ['node:*'],
    target: 'es2020',
    write: false,
    logLevel: 'error',
  });
  built = new Map(result.outputFiles.map((f) => [path.basename(f.path), f.contents]));
  built.set('live.css', fs.readFileSync(path.join(__dirname, 'live.css')));
  return built;
}

/**
 * For each page (by its notebook's path), the HTML of its block, or '' when it has none.
 * Writes `assets/live/` into `outDir` when any page has a block.
 */
export function liveBlocks(outDir: string, sources: string[]): string[] {
  const blocks = sources.map((source) => Object.entries(BLOCKS).find(([prefix]) => path.basename(source).startsWith(prefix))?.[1]);
  if (blocks.every((b) => b === undefined)) return blocks.map(() => '');
  const folder = path.join(outDir, 'assets', 'live');
  fs.mkdirSync(folder, { recursive: true });
  for (const [name, contents] of bundles()) fs.writeFileSync(path.join(folder, name), contents);
  return blocks.map((b) =>
    b
      ? `<section class="live-block" data-live="${b.kind}" aria-labelledby="live-${b.kind}">\n` +
        `<h2 id="live-${b.kind}">Run it in your browser</h2>\n<p>${b.text} Nothing is downloaded until you press the button (about 1 MB: TensorFlow.js and the library).</p>\n` +
        '<button type="button" class="live-run">Run in this browser</button>\n<div class="live-output" aria-live="polite"></div>\n</section>\n' +
        '<link rel="stylesheet" href="assets/live/live.css">\n<script src="assets/live/loader.js" defer></script>\n'
      : '',
  );
}
