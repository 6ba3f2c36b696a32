import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { writeTokenConfig, type TokenConfig } from '../../scripts/lab/tokenConfig';
import { killTagged, newKernelTag, taggedEnv } from '../../scripts/notebooks/processTree';
import { portSafeArgs, portSafeEnv } from '../../scripts/jupyter/portSafe';
import { CLASSIC, notebooksOf } from '../helpers/frontEndSets';
import { compareShots, pixelDifference, shootFigure, siteFigure } from '../helpers/figureShots';
import { inSlots, NOTEBOOK_SLOTS } from '../helpers/notebookSlots';
import { Slots } from '../../scripts/notebooks/slots';
import { HANG_MS, NOTEBOOK_HANG_MS } from '../helpers/ceilings';
import { launchBrowser, newPage } from '../helpers/chromium';

// Opens a representative set of notebooks (test/helpers/frontEndSets.ts) in the real classic Notebook front end (Debian's jupyter-notebook) with the
// tslab kernelspec and the figure renderer that `npm run kernel:install` installs, in headless
// Chromium, runs all cells as a reader would (Cell > Run All), and checks what the reader sees:
// every code cell executed, no error output, and one chart drawn by plotly.js per showFigure
// call. Then one chapter's figure is compared with the site's drawing of the same JSON
// (figureParity.ts). Copies of the notebooks are used, inside the repository so that
// `tfjs-accumulate` resolves, because the front end autosaves. `npm run test:classic` runs it.
const ROOT = path.resolve(__dirname, '..', '..');
const NOTEBOOKS = path.join(ROOT, 'notebooks');
/** The representative set of test/helpers/frontEndSets.ts (every notebook with E2E_ALL_NOTEBOOKS=1). */
const ALL_FILES = notebooksOf(CLASSIC);
/** Only these notebooks (comma-separated, e.g. `04-training-loop.ipynb`); for development. */
const FILES = ALL_FILES.filter((f) => !process.env.CLASSIC_E2E_ONLY || process.env.CLASSIC_E2E_ONLY.split(',').includes(f));
const CONFIG = {
  /** Where the copies go (git-ignored). */
  work: path.join(ROOT, 'build', 'classic-notebook'),
  /** The longest a whole notebook may take (ms): a ceiling for a hang (test/helpers/ceilings.ts). */
  notebookTimeoutMs: NOTEBOOK_HANG_MS,
};

let tmp: string;
let server: ChildProcess;
let base: string;
let browser: Browser;
let tokenConfig: TokenConfig | undefined;
const serverTag = newKernelTag();

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'classic-e2e-'));
  fs.rmSync(CONFIG.work, { recursive: true, force: true });
  fs.mkdirSync(CONFIG.work, { recursive: true });
  fs.mkdirSync(path.join(CONFIG.work, 'zh'));
  for (const f of FILES) fs.copyFileSync(path.join(NOTEBOOKS, f), path.join(CONFIG.work, f));
  const prefix = path.join(tmp, 'prefix');
  const install = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'installKernel.ts'), `--prefix=${prefix}`], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(install.status, 0, install.stdout + install.stderr);
  const token = randomBytes(16).toString('hex');
  const port = await freePort();
  // The token in a private config file, never on the command line (scripts/lab/tokenConfig.ts).
  tokenConfig = writeTokenConfig(token, 'NotebookApp');
  // Kernels whose port was taken start again on new ports (scripts/jupyter/portSafe.ts).
  const args = ['--no-browser', '--ip=127.0.0.1', `--port=${port}`, `--config=${tokenConfig.file}`, `--notebook-dir=${CONFIG.work}`, ...portSafeArgs('classic')];
  // CI runs as root; a loopback server whose token only this user can read, for this test only.
  if (process.getuid?.() === 0) args.push('--allow-root');
  server = spawn('/usr/bin/jupyter-notebook', args, {
    // Tagged, so that after() finds every process its kernels left (processTree.ts).
    env: taggedEnv(serverTag, {
      ...portSafeEnv(process.env),
      // The kernelspec and the figure renderer, where kernel:install put them for this prefix.
      JUPYTER_PATH: path.join(prefix, 'share', 'jupyter'),
      JUPYTER_CONFIG_PATH: path.join(prefix, 'etc', 'jupyter'),
      JUPYTER_DATA_DIR: path.join(tmp, 'data'),
      JUPYTER_CONFIG_DIR: path.join(tmp, 'config'),
      JUPYTER_RUNTIME_DIR: path.join(tmp, 'runtime'),
    }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  server.stderr!.on('data', (d) => (log += d));
  const started = Date.now();
  while (!log.includes(`127.0.0.1:${port}`)) {
    assert.ok(Date.now() - started < HANG_MS && server.exitCode === null, `jupyter-notebook did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  base = `http://127.0.0.1:${port}`;
  browser = await launchBrowser();
  // The token goes into a cookie once, so later page loads need not carry it.
  const page = await newPage(browser);
  await page.goto(`${base}/tree?token=${token}`);
  await page.close();
  (globalThis as { classicToken?: string }).classicToken = token;
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  killTagged(serverTag);
  tokenConfig?.remove();
  fs.rmSync(tmp, { recursive: true, force: true });
});

interface Seen {
  cells: number;
  executed: number;
  /** Error outputs, and what cells wrote to stderr (tslab reports errors there). */
  errors: string[];
  charts: number;
  showFigureCalls: number;
  pageErrors: string[];
}

/** Opens a notebook of CONFIG.work, runs all cells (Cell > Run All) and reports what shows. */
async function runInClassic(file: string): Promise<Seen> {
  const token = (globalThis as { classicToken?: string }).classicToken;
  const page = await newPage(browser, { viewport: { width: 1200, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  try {
    await page.goto(`${base}/notebooks/${file}?token=${token}`);
    await page.waitForFunction(() => (window as any).Jupyter?.notebook?.kernel?.is_connected?.(), null, { timeout: HANG_MS, polling: 250 });
    await page.evaluate(() => (window as any).Jupyter.notebook.execute_all_cells());
    // Done when no cell waits ("In [*]") and the kernel is idle, twice in a row.
    await page.waitForFunction(
      () => {
        const w = window as any;
        const nb = w.Jupyter.notebook;
        const busy = nb.get_cells().some((c: any) => c.input_prompt_number === '*') || document.querySelector('#kernel_indicator_icon.kernel_busy_icon');
        w.__idleChecks = busy ? 0 : (w.__idleChecks ?? 0) + 1;
        return w.__idleChecks >= 2;
      },
      null,
      { timeout: CONFIG.notebookTimeoutMs, polling: 500 },
    );
    // plotly.js draws a moment after its output arrived (the first figure loads it); a figure
    // still undrawn after this is counted as missing below.
    await page
      .waitForFunction(() => Array.from(document.querySelectorAll('.output_area .tfjs-accumulate-plotly')).every((f) => f.querySelector('.main-svg .trace')), null, { timeout: HANG_MS, polling: 250 })
      .catch(() => undefined);
    const seen = await page.evaluate(() => {
      const code = (window as any).Jupyter.notebook.get_cells().filter((c: any) => c.cell_type === 'code');
      return {
        cells: code.length,
        executed: code.filter((c: any) => typeof c.input_prompt_number === 'number').length,
        errors: Array.from(document.querySelectorAll('.output_error, .output_stderr')).map((e) => (e.textContent ?? '').slice(0, 500)),
        charts: Array.from(document.querySelectorAll('.output_area .tfjs-accumulate-plotly')).filter((f) => f.querySelector('.main-svg .trace')).length,
        showFigureCalls: code.map((c: any) => (c.get_text().match(/showFigure\(/g) ?? []).length).reduce((a: number, b: number) => a + b, 0),
      };
    });
    // File > Save, so that the executed notebook can be opened again (the figure test below).
    await page.evaluate(() => (window as any).Jupyter.notebook.save_notebook());
    await page.waitForFunction(() => !(window as any).Jupyter.notebook.dirty, null, { timeout: HANG_MS, polling: 250 });
    return { ...seen, pageErrors };
  } finally {
    await page.close();
  }
}

describe('the notebooks in classic Notebook with the tslab kernel', () => {
  // Two notebooks at a time, one that measures time alone (test/helpers/notebookSlots.ts).
  const slots = new Slots(NOTEBOOK_SLOTS);
  describe('the set of notebooks, two at a time', { concurrency: true }, () => {
    for (const file of FILES) {
      // The time out counts the wait for a slot too: every notebook's before this one, at most.
      it(`runs ${file} top to bottom and draws its charts`, { timeout: (FILES.length + 1) * (CONFIG.notebookTimeoutMs + 3 * HANG_MS) }, () =>
        inSlots(slots, path.join(NOTEBOOKS, file), async () => {
          const seen = await runInClassic(file);
          assert.deepEqual(seen.errors, [], 'no cell shows an error or writes to stderr');
          assert.equal(seen.executed, seen.cells, 'every code cell ran');
          assert.equal(seen.charts, seen.showFigureCalls, 'one drawn chart per showFigure call');
          assert.deepEqual(seen.pageErrors, []);
        }));
    }
  });

  it('shows a failing cell as a failure (the check above can fail)', async () => {
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'notebooks', 'runtime-error.ipynb'), path.join(CONFIG.work, 'runtime-error.ipynb'));
    const seen = await runInClassic('runtime-error.ipynb');
    assert.ok(seen.errors.some((e) => e.includes('RangeError')), `errors seen: ${JSON.stringify(seen.errors)}`);
  });
});

/** The notebook whose figure is compared across front ends: chapter 4's loss chart, a short run. */
const FIGURE_FILE = '04-training-loop.ipynb';
/** The window of the comparison, as in test/e2e/jupyterLab.e2e.ts. */
const WINDOW = { width: 1280, height: 900 };
/** Where classic's figure renderer draws (scripts/classic/nbextension/main.js). */
const CLASSIC_CHART = { chart: '.tfjs-accumulate-plotly-target', column: '.output_subarea' };

/** Opens an executed notebook of CONFIG.work in a fresh page, as a reader reopening it does. */
async function reopenInClassic(file: string): Promise<Page> {
  const page = await newPage(browser, { viewport: WINDOW });
  await page.goto(`${base}/notebooks/${file}?token=${(globalThis as { classicToken?: string }).classicToken}`);
  await page.waitForFunction(() => (window as any).Jupyter?.notebook?._fully_loaded && (window as any).Jupyter.notebook.kernel?.is_connected?.(), null, { timeout: HANG_MS, polling: 250 });
  return page;
}

/**
 * Appends to the cell with the notebook's first figure a copy of that figure output, changed by
 * `change` (a function body run on the copy's Plotly JSON, `fig`), and returns its selector.
 */
async function appendChangedFigure(page: Page, id: string, change: string): Promise<string> {
  await page.evaluate(
    ({ id, change }) => {
      const mime = 'application/vnd.plotly.v1+json';
      const cell = (window as any).Jupyter.notebook.get_cells().find((c: any) => c.output_area?.outputs.some((o: any) => o.data?.[mime]));
      const output = JSON.parse(JSON.stringify(cell.output_area.outputs.find((o: any) => o.data?.[mime])));
      new Function('fig', change)(output.data[mime]);
      cell.output_area.append_output(output);
      cell.output_area.element.children('.output_area').last().attr('id', id);
    },
    { id, change },
  );
  return `#${id} ${CLASSIC_CHART.chart}`;
}

describe('the same figure in classic Notebook as on the site', () => {
  it(`draws ${FIGURE_FILE}'s figure as the site draws its JSON, and reopens the notebook unmodified`, { timeout: CONFIG.notebookTimeoutMs + 6 * HANG_MS }, async (t) => {
    // Run and saved above, unless a filter left it out.
    const saved = JSON.parse(fs.readFileSync(path.join(CONFIG.work, FIGURE_FILE), 'utf8')) as { cells: { outputs?: unknown[] }[] };
    if (saved.cells.every((c) => !c.outputs?.length)) await runInClassic(FIGURE_FILE);
    const { shot: site, page: sitePage } = await siteFigure(browser, path.join(CONFIG.work, FIGURE_FILE), tmp, WINDOW);
    const page = await reopenInClassic(FIGURE_FILE);
    try {
      const classic = await shootFigure(page, { label: 'classic', ...CLASSIC_CHART });
      const { differing } = await pixelDifference(page, site.png, classic.png);
      t.diagnostic(`site ${site.width} x ${site.height} in ${site.column}, classic ${classic.width} x ${classic.height} in ${classic.column}; ${(differing * 100).toFixed(3)}% of pixels apart at the common width`);
      assert.deepEqual(compareShots(site, classic, differing), [], 'classic draws the site’s figure');
      assert.equal(classic.height, 420, 'the height the figure JSON gives');
      await page.waitForTimeout(1000);
      assert.equal(await page.evaluate(() => (window as any).Jupyter.notebook.dirty), false, 'opening the executed notebook leaves it unmodified');

      // The comparison can fail: the same output with its first trace drawn black.
      const changed = await shootFigure(page, { label: 'classic, changed colour', column: CLASSIC_CHART.column, chart: await appendChangedFigure(page, 'changed-colour', "fig.data[0].line.color = '#000000'; fig.data[0].marker = { color: '#000000' };") });
      const problems = compareShots(site, changed, (await pixelDifference(page, site.png, changed.png)).differing);
      t.diagnostic(`changed colour: ${problems.join('; ')}`);
      assert.ok(problems.some((p) => p.startsWith('trace colours: classic, changed colour #000000 #d55e00')), problems.join('\n'));
      assert.ok(problems.some((p) => p.startsWith('pixels:')), problems.join('\n'));
    } finally {
      await page.close();
    }

    // A notebook executed elsewhere is untrusted (other content, so no signature of this server
    // matches): classic sanitizes its HTML, and the renderer, registered as safe, still draws.
    const untrusted = `untrusted-${FIGURE_FILE}`;
    const nb = JSON.parse(fs.readFileSync(path.join(CONFIG.work, FIGURE_FILE), 'utf8'));
    nb.metadata['tfjs-accumulate-e2e'] = 'a copy this server never signed';
    fs.writeFileSync(path.join(CONFIG.work, untrusted), JSON.stringify(nb));
    const other = await reopenInClassic(untrusted);
    try {
      assert.equal(await other.evaluate(() => (window as any).Jupyter.notebook.trusted), false, 'the copy is untrusted');
      const shot = await shootFigure(other, { label: 'classic, untrusted', ...CLASSIC_CHART });
      assert.deepEqual(compareShots(site, shot, (await pixelDifference(other, site.png, shot.png)).differing), []);
      assert.equal(await other.evaluate(() => (window as any).Jupyter.notebook.dirty), false, 'opening it leaves it unmodified');
    } finally {
      await other.close();
      await sitePage.close();
    }
  });
});
