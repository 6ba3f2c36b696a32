import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportSite, type SiteReport } from '../../../scripts/site/exportSite';
import { figureBundle, lineChart, PLOTLY_MIME } from '../../../src/tutorial/plot';
import { HOSTILE, HOSTILE_HTML, REMOTE, writeHostileNotebooks } from '../../fixtures/hostileNotebooks';

// Executed notebooks written here by hand, with every kind of output the exporter must handle;
// the browser test (test/e2e/browser.e2e.ts) opens a site made from really executed ones.
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const SCRIPT = '<script>window.__ran = true;</script>';

const md = (source: string) => ({ cell_type: 'markdown', metadata: {}, source });
const code = (source: string, outputs: unknown[], n: number) => ({
  cell_type: 'code',
  metadata: { execution: { 'iopub.execute_input': '2025-01-01T00:00:00.000Z', 'shell.execute_reply': '2025-01-01T00:00:01.500Z' } },
  source,
  outputs,
  execution_count: n,
});
const notebook = (cells: unknown[], status: 'ok' | 'failed' = 'ok') => ({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: {
    kernelspec: { name: 'tslab', display_name: 'TypeScript', language: 'typescript' },
    'tfjs-accumulate': { runner: { status, executedCells: 2, codeCells: 2, totalMs: 2500, startupMs: 1000, cells: [], ...(status === 'failed' ? { error: { cell: 2, kind: 'error', text: 'x' } } : {}) } },
  },
  cells,
});

const figure = lineChart({ title: 'Loss', xTitle: 'updateStep', yTitle: 'loss', series: [{ name: `</script>${SCRIPT}`, x: [1, 2], y: [1, 0.5] }] });

let tmp: string;
let report: SiteReport;
let first: string;
let second: string;
let index: string;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exportSite-test-'));
  const inDir = path.join(tmp, 'executed');
  fs.mkdirSync(inDir);
  fs.writeFileSync(
    path.join(inDir, '01-first.ipynb'),
    JSON.stringify(
      notebook([
        md(`# First notebook\nWhere the **subtitle** is.\n\n## Math\nInline $\\frac{1}{N}\\sum g_i$ and ${SCRIPT} in markdown.`),
        code('const accumulationSteps: number = 4;', [{ output_type: 'stream', name: 'stdout', text: `printed ${SCRIPT}\n` }], 2),
        code('display()', [
          { output_type: 'display_data', data: { 'text/html': '<b class="tfjs-accumulate-kept">kept</b>', 'text/plain': 'kept' }, metadata: {} },
          { output_type: 'display_data', data: { 'image/png': PNG_1x1 }, metadata: {} },
          { output_type: 'display_data', data: { 'image/svg+xml': `<svg xmlns="http://www.w3.org/2000/svg">${SCRIPT}</svg>` }, metadata: {} },
          { output_type: 'display_data', ...figureBundle(figure) },
        ], 2),
        md('## Second section\nSee [the next notebook](02-second.ipynb#second-notebook) and [elsewhere](https://example.org/a.ipynb).'),
      ]),
    ),
  );
  fs.writeFileSync(
    path.join(inDir, '02-second.ipynb'),
    JSON.stringify(
      notebook(
        [
          md('# Second notebook\nIt fails.'),
          code('throw new Error()', [{ output_type: 'error', ename: 'Error', evalue: SCRIPT, traceback: [`Error: ${SCRIPT}`, '    at evalmachine.<anonymous>:1:7'] }], 1),
        ],
        'failed',
      ),
    ),
  );
  report = exportSite({ inDir, outDir: path.join(tmp, 'site') });
  first = fs.readFileSync(path.join(tmp, 'site', '01-first.html'), 'utf8');
  second = fs.readFileSync(path.join(tmp, 'site', '02-second.html'), 'utf8');
  index = fs.readFileSync(report.index, 'utf8');
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('exportSite', () => {
  it('writes an index and one page per notebook, counting the Plotly outputs', () => {
    assert.deepEqual(
      report.pages.map((p) => [path.basename(p.file), p.title, p.plotlyOutputs]),
      [
        ['01-first.html', 'First notebook', 1],
        ['02-second.html', 'Second notebook', 0],
      ],
    );
  });

  it('lists the notebooks in order in the index, with subtitles, sections and failures', () => {
    assert.ok(index.indexOf('href="01-first.html"') < index.indexOf('href="02-second.html"'));
    assert.match(index, /<div class="subtitle">Where the <strong>subtitle<\/strong> is\.<\/div>/);
    assert.match(index, /<a href="01-first.html#math">Math<\/a>.*<a href="01-first.html#second-section">Second section<\/a>/s);
    assert.match(index, /Second notebook<\/a> <span class="badge">failed<\/span>/);
  });

  it('turns links to other notebooks into links to their pages', () => {
    assert.match(first, /<a href="02-second.html#second-notebook">the next notebook<\/a> and <a href="https:\/\/example.org\/a.ipynb">elsewhere<\/a>/);
  });

  it('links each page to the previous and next one', () => {
    assert.match(first, /<nav class="pager" aria-label="Previous and next chapter"><a href="index.html">Contents<\/a><a rel="next" href="02-second.html">Second notebook →<\/a><\/nav>/);
    assert.match(second, /<nav class="pager" aria-label="Previous and next chapter"><a rel="prev" href="01-first.html">← First notebook<\/a><a href="index.html">Contents<\/a><\/nav>/);
    assert.match(second, /class="status-banner">This notebook did not run to the end: <a href="#cell-2">cell 2<\/a> failed/);
  });

  it('shows <script> from markdown, text outputs and errors as text, never as an element', () => {
    const scripts = (html: string) => [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    // The only script elements: the theme boot, the figure's JSON data (not executable) and the
    // site's own script, which loads plotly.js when a chart comes into view.
    assert.deepEqual(scripts(first), ['<script>', '<script type="application/json" class="plotly-data">', '<script type="application/json" id="ui-strings">', '<script src="assets/site.js" defer>']);
    assert.deepEqual(scripts(second), ['<script>', '<script type="application/json" id="ui-strings">', '<script src="assets/site.js" defer>']);
    assert.match(first, /Inline <span class="katex">.*and &lt;script&gt;window.__ran = true;&lt;\/script&gt; in markdown\./s);
    assert.match(first, /<pre class="output stream stdout wrap">printed &lt;script&gt;window.__ran = true;&lt;\/script&gt;\n<\/pre>/);
    assert.match(second, /<pre class="output error">Error: &lt;script&gt;window.__ran = true;&lt;\/script&gt;\n    at evalmachine/);
  });

  it('keeps HTML outputs, inlines images (SVG as an image, so it cannot run scripts)', () => {
    assert.match(first, /<div class="output html"><b class="tfjs-accumulate-kept">kept<\/b><\/div><\/div>/, "kept whole, with no note");
    assert.ok(first.includes(`<img alt="Output 2 of cell 3" src="data:image/png;base64,${PNG_1x1}">`));
    assert.match(first, /<img alt="Output 3 of cell 3" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+">/);
  });

  it('embeds the Plotly figure as JSON that no trace name can break out of', () => {
    const json = /<script type="application\/json" class="plotly-data">(.*?)<\/script>/s.exec(first)![1];
    assert.deepEqual(JSON.parse(json), figure);
    assert.ok(!first.includes(PLOTLY_MIME), 'the MIME type is not leaked into the page');
  });

  it('renders LaTeX at build time, highlights TypeScript and shows prompts without cell times', () => {
    assert.match(first, /<span class="katex"><span class="katex-mathml"><math/);
    assert.match(first, /<span class="hljs-keyword">const<\/span> <span class="hljs-attr">accumulationSteps<\/span>: <span class="hljs-built_in">number<\/span>/);
    assert.match(first, /<span class="meta">\[2\]<\/span>/);
    assert.doesNotMatch(first, /1\.5 s/, 'the cell took 1.5 s; the page does not say so');
  });

  it('is self-contained: every stylesheet, script and font it references is in the site', () => {
    const site = path.join(tmp, 'site');
    for (const page of [first, second, index]) {
      assert.doesNotMatch(page, /(?:src|<link[^>]*href)="(?:https?:)?\/\//, 'no asset from the network');
      for (const [, ref] of page.matchAll(/(?:src|href)="([^"#]+)"/g)) {
        if (/^(data|https?):/.test(ref)) continue; // inlined, or a link the reader may follow
        assert.ok(fs.existsSync(path.join(site, ref)), `${ref} is missing`);
      }
    }
    const css = fs.readFileSync(path.join(site, 'assets', 'katex', 'katex.min.css'), 'utf8');
    for (const [, font] of css.matchAll(/url\((fonts\/[^)]+)\)/g)) assert.ok(fs.existsSync(path.join(site, 'assets', 'katex', font)), font);
    // site.js loads the minified basic bundle on demand, from its own folder (assets/).
    assert.match(fs.readFileSync(path.join(site, 'assets', 'site.js'), 'utf8'), /script\.src = ASSETS \+ 'plotly\.min\.js'/);
    assert.equal(fs.statSync(path.join(site, 'assets', 'plotly.min.js')).size, fs.statSync(require.resolve('plotly.js-basic-dist-min')).size);
  });

  it('refuses broken math, naming the notebook and the cell', () => {
    const inDir = path.join(tmp, 'broken');
    fs.mkdirSync(inDir);
    fs.writeFileSync(path.join(inDir, 'x.ipynb'), JSON.stringify(notebook([md('# X'), md('$\\frac{1}{$')])));
    assert.throws(() => exportSite({ inDir, outDir: path.join(tmp, 'broken-site') }), /x\.ipynb, cell 2: KaTeX cannot render the math/);
  });

  it('asks for npm run notebooks when there is nothing to export', () => {
    assert.throws(() => exportSite({ inDir: path.join(tmp, 'nothing'), outDir: path.join(tmp, 'nothing-site') }), /no executed notebooks in .*; run `npm run notebooks` first\./);
  });

  it('never empties a folder it did not make', () => {
    const foreign = path.join(tmp, 'foreign');
    fs.mkdirSync(foreign);
    fs.writeFileSync(path.join(foreign, 'keep.txt'), 'mine');
    assert.throws(() => exportSite({ inDir: path.join(tmp, 'executed'), outDir: foreign }), /holds other files/);
    assert.equal(fs.readFileSync(path.join(foreign, 'keep.txt'), 'utf8'), 'mine');
  });
});

const INJECTED = /<img src=x|<script>window\.__pwned|onerror="window/;
/** In an output's attributes, what would let it load a remote resource or cover the page. */
const REACHES_OUT = new RegExp(`="[^"]*(?:${REMOTE.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}|image-set|url\\(|position\\s*:|z-index|skip-link|chapter-nav)|\\s(?:src|srcset|href|xlink:href|poster|id)=`);
/** The sanitized HTML outputs of a page, each up to the note that follows it. */
const htmlOutputs = (page: string): string[] => [...page.matchAll(/<div class="output html">([\s\S]*?)<p class="output unsupported">/g)].map((m) => m[1]);

describe('exportSite with hostile notebook names and metadata', () => {
  let dir: string;
  let pages: string[];
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exportSite-hostile-'));
    writeHostileNotebooks(path.join(dir, 'executed'));
    exportSite({ inDir: path.join(dir, 'executed'), outDir: path.join(dir, 'site') });
    const site = path.join(dir, 'site');
    pages = fs.readdirSync(site).filter((f) => f.endsWith('.html')).map((f) => fs.readFileSync(path.join(site, f), 'utf8'));
    pages.push(fs.readFileSync(path.join(site, 'assets', 'search-index.js'), 'utf8'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the checks find markup that was not escaped or sanitized (negative case)', () => {
    assert.match(`<a href="${HOSTILE.name}.html">x</a>`, INJECTED);
    assert.match(`<p>${HOSTILE.markup}</p>`, INJECTED);
    for (const [name, value] of Object.entries(HOSTILE_HTML)) assert.match(value, REACHES_OUT, name);
  });

  it('writes every page, and no page holds the injected markup as markup', () => {
    assert.equal(pages.length, 7, 'index, search, four chapters, the search index');
    for (const page of pages) assert.doesNotMatch(page, INJECTED);
  });

  it('keeps no remote resource, fixed or sticky box, or site class of a hostile output, and says it removed them', () => {
    const page = pages.find((p) => p.includes('<title>Hostile outputs'))!;
    const outputs = htmlOutputs(page);
    assert.equal(outputs.length, Object.keys(HOSTILE_HTML).length);
    for (const output of outputs) assert.doesNotMatch(output, REACHES_OUT);
    assert.ok(page.includes(HOSTILE.overlayText), 'the text stays, as text');
    const notes = page.match(/<p class="output unsupported">Parts of this HTML output were removed/g) ?? [];
    assert.equal(notes.length, Object.keys(HOSTILE_HTML).length, 'one note per sanitized output');
  });

  it('links a page named like a javascript: URL by its encoded name everywhere, search included', () => {
    const index = pages.find((p) => p.includes('<h2 id="contents">'))!;
    const encoded = encodeURIComponent(`${HOSTILE.scriptName}.html`);
    assert.ok(index.includes(`href="${encoded}"`), 'the contents');
    const searchIndex = pages.find((p) => p.includes('TFJS_ACCUMULATE_SEARCH'))!;
    const shipped = JSON.parse(searchIndex.slice(searchIndex.indexOf('= ') + 2).trim().replace(/;$/, '')) as { pages: { href?: string; file?: string }[] };
    const hrefs = shipped.pages.map((p) => p.href ?? p.file ?? '');
    assert.ok(hrefs.includes(encoded), `the search index: ${JSON.stringify(hrefs)}`);
    assert.deepEqual(hrefs.filter((h) => /^\s*javascript:/i.test(h)), [], 'no search link is a javascript: URL');
  });

  it('links the hostile page by its percent-encoded name and shows the name as text', () => {
    const index = pages.find((p) => p.includes('<h2 id="contents">'))!;
    assert.ok(index.includes(`href="${encodeURIComponent(`${HOSTILE.name}.html`)}"`));
    assert.ok(index.includes('Hostile &lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;'));
  });

  it('treats runner fields of the wrong type as absent instead of printing them', () => {
    const page = pages.find((p) => p.includes('<title>Hostile'))!;
    assert.match(page, /Executed by <code>npm run notebooks<\/code>\./);
    assert.match(page, /did not run to the end: a cell failed \(&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;\)/);
    assert.match(page, /<span class="meta">\[ \]<\/span>/);
    assert.match(page, /<div class="output html"><b>bold<\/b><\/div><p class="output unsupported">Parts of this HTML output were removed: /);
  });
});
