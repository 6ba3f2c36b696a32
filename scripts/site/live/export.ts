/**
 * The "run it in your browser" blocks of the site (chapters 3 and 4). scripts/site/exportSite.ts
 * calls {@link liveBlocks} once per export: it bundles ./loader.ts (small, on every chapter with
 * a block) and ./run.ts (tfjs and the library, loaded only when the reader asks) with esbuild
 * into `assets/live/`, and returns the block's HTML for each page, in the page's edition.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { joinSentences } from '../../../src/tutorial/index';
import { escapeHtml, html, trusted } from '../html';
import type { PageLang } from '../model';
import { fillHtml, ui } from '../strings';

/**
 * Chapters with a block, by the notebook's file name prefix: what runs, and which of the
 * edition's sentences (strings.ts `live`) says so.
 */
const BLOCKS: Record<string, { kind: string; text: 'accumulation' | 'trainingLoop' }> = {
  '03-': { kind: 'accumulation', text: 'accumulation' },
  '04-': { kind: 'training-loop', text: 'trainingLoop' },
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
 * For each page (by its notebook's path), the HTML of its block, or '' when it has none, in the
 * edition's language: the words come from strings.ts, and the block tells its script the
 * language (`data-lang`, which the chart's texts follow) and the words the script shows
 * (`data-strings`). `root` leads from the page to the site's top (`'../'` from `zh/`), where
 * `assets/live/` is written once for every edition.
 */
export function liveBlocks(outDir: string, sources: string[], lang: PageLang = 'en', root = ''): string[] {
  const blocks = sources.map((source) => Object.entries(BLOCKS).find(([prefix]) => path.basename(source).startsWith(prefix))?.[1]);
  if (blocks.every((b) => b === undefined)) return blocks.map(() => '');
  const folder = path.join(outDir, 'assets', 'live');
  fs.mkdirSync(folder, { recursive: true });
  for (const [name, contents] of bundles()) fs.writeFileSync(path.join(folder, name), contents);
  const t = ui(lang).live;
  // The display locale of the chart (src/tutorial/plot/locale.ts): zh for the Chinese edition.
  const locale = lang === 'zh-CN' ? 'zh' : 'en';
  const words = JSON.stringify({ loading: t.loading, running: t.running, backend: t.backend, failed: t.failed, numbers: t.numbers });
  const assets = `${root}assets/live/`;
  return blocks.map((b) =>
    b
      ? html`<section class="live-block" data-live="${b.kind}" data-lang="${locale}" data-strings="${words}" aria-labelledby="live-${b.kind}">
<h2 id="live-${b.kind}">${t.heading}</h2>
<p>${trusted(joinSentences([fillHtml(t[b.text], { api: html`<code>GradientAccumulator</code>` }).value, escapeHtml(t.download)]))}</p>
<button type="button" class="live-run">${t.button}</button>
<div class="live-output" aria-live="polite"></div>
</section>
<link rel="stylesheet" href="${assets}live.css">
<script src="${assets}loader.js" defer></script>
`.value
      : '',
  );
}
