import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { cellOutputs, findLosses } from '../../scripts/deno/compareOutputs';
import { readNotebook } from '../../scripts/deno/notebooks';
import { ensureLabApp } from '../../scripts/lab/app';
import { isRoot, startLabServer, type LabServer } from '../../scripts/lab/server';
import { compareShots, pixelDifference, shootFigure, siteFigure } from '../helpers/figureShots';
import { LAB, notebooksOf } from '../helpers/frontEndSets';
import { isolatedJupyterEnv } from '../helpers/jupyter';
import { calls, closeInPage, drawnFigures, errorOutputs, loadLab, openInPage, readOpenNotebook, renderedTables, runAll, save } from '../helpers/jupyterLab';
import { HANG_MS, NOTEBOOK_HANG_MS } from '../helpers/ceilings';
import { launchBrowser, newPage as newCeiledPage } from '../helpers/chromium';

// A representative set of notebooks of both editions (test/helpers/frontEndSets.ts), read in JupyterLab (lab/'s app on Debian's jupyterlab-server)
// as a reader does, under each kernel: open it, check the kernel, Run All, no error or stderr,
// every showFigure drawn and every showTable rendered, save, reopen in a page that never had it
// open: still unmodified, every figure drawn again. The Deno server sees only the deno kernelspec, so the
// notebooks (which name `tslab`) get it by their language, as a reader with only Deno would;
// every cell must then show as many lines as under tslab. `npm run test:lab` runs it; the lab
// app is installed (npm ci, from npm's cache) and built here, only when stale.
const ROOT = path.resolve(__dirname, '..', '..');
const NOTEBOOKS = path.join(ROOT, 'notebooks');
/** The representative set of test/helpers/frontEndSets.ts (every notebook with E2E_ALL_NOTEBOOKS=1). */
const FILES = notebooksOf(LAB);
const PLOTLY_MIME = 'application/vnd.plotly.v1+json';
const ALL_KERNELS = ['tslab', 'deno'] as const;
type Kernel = (typeof ALL_KERNELS)[number];
const CONFIG = {
  /** The copies (inside the repository, so that the kernels find the library), per kernel. */
  work: path.join(ROOT, 'build', 'jupyterlab-e2e'),
  /** The longest Run All of one notebook may take (ms): a ceiling for a hang (test/helpers/ceilings.ts). */
  notebookTimeoutMs: NOTEBOOK_HANG_MS,
  /** Only these notebooks (comma-separated, e.g. `01-environment.ipynb,zh/02-model.ipynb`, or `-` for none); for development. */
  only: process.env.LAB_E2E_ONLY?.split(',').filter(Boolean),
  /** Only this kernel (`tslab` or `deno`); for development. The Deno run compares with tslab's saved copies. */
  kernels: ALL_KERNELS.filter((k) => !process.env.LAB_E2E_KERNEL || process.env.LAB_E2E_KERNEL === k),
  /** Where a failing test's screenshot goes. */
  shots: path.join(ROOT, 'build', 'jupyterlab-e2e-shots'),
};
const KERNELS = CONFIG.kernels;
/** The notebook whose figure is compared with the site's, as test:classic compares it. */
const FIGURE_FILE = '04-training-loop.ipynb';

/** A cell that prints more than Deno's kernel publishes before its idle, then a second cell. */
const LATE_LINES = 300;
const LATE_OUTPUT = {
  cells: [`for (let i = 0; i < ${LATE_LINES}; i++) console.log(\`line \${i}\`);`, "console.log('second cell');\n42"].map((source, i) => ({ id: `late-${i}`, cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source })),
  // JupyterLab falls back to a kernel of the notebook's language by `language_info.name`, which
  // the chapters carry; without it a server with only Deno asks the reader to pick a kernel.
  metadata: { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' }, language_info: { name: 'typescript' } },
  nbformat: 4,
  nbformat_minor: 5,
};

let tmp: string;
let browser: Browser;
/** Where Deno's kernel proxy records what reached it and what it did (scripts/deno/kernel_proxy.py). */
const proxyTrace = () => path.join(tmp, 'deno-proxy-trace.jsonl');

interface ProxyEvent {
  t: number;
  event: 'request' | 'release' | 'reply' | 'finish' | 'abort';
  msg_id: string;
  failed?: boolean;
  aborting_until?: number | null;
}

/** The proxy's events from byte `from` of its trace on. */
function proxyEvents(from: number): ProxyEvent[] {
  const text = fs.existsSync(proxyTrace()) ? fs.readFileSync(proxyTrace()).subarray(from).toString('utf8') : '';
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ProxyEvent);
}
const servers = new Map<Kernel, LabServer>();

function installKernel(kernel: Kernel): void {
  const flags = kernel === 'deno' ? ['--deno'] : [];
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'installKernel.ts'), ...flags, `--prefix=${path.join(tmp, kernel, 'prefix')}`], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
}

before(async () => {
  const started = performance.now();
  const app = ensureLabApp({ stdio: 'pipe' });
  console.log(`# lab app: npm ci ${app.installSeconds.toFixed(1)} s, build ${app.buildSeconds.toFixed(1)} s, setup ${((performance.now() - started) / 1000).toFixed(1)} s`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-e2e-'));
  fs.rmSync(CONFIG.work, { recursive: true, force: true });
  for (const kernel of KERNELS) {
    const dir = path.join(CONFIG.work, kernel);
    fs.mkdirSync(path.join(dir, 'zh'), { recursive: true });
    for (const f of FILES) fs.copyFileSync(path.join(NOTEBOOKS, f), path.join(dir, f));
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'notebooks', 'runtime-error.ipynb'), path.join(dir, 'runtime-error.ipynb'));
    fs.writeFileSync(path.join(dir, 'late-output.ipynb'), JSON.stringify(LATE_OUTPUT));
    // One server per kernel, each seeing only its own kernelspec.
    installKernel(kernel);
    const state = path.join(tmp, kernel);
    // CI runs as root: allowed here, for a loopback server whose token only this user can read.
    servers.set(kernel, await startLabServer({ root: dir, frontEnd: 'lab-app', allowRoot: isRoot(), env: { ...isolatedJupyterEnv(state), DENO_NO_UPDATE_CHECK: '1', KERNEL_PROXY_TRACE: proxyTrace() }, settingsDir: path.join(state, 'settings'), workspacesDir: path.join(state, 'workspaces') }));
  }
  browser = await launchBrowser();
});

after(async () => {
  for (const { page } of pages.values()) await page.close().catch(() => undefined);
  await browser?.close();
  for (const server of servers.values()) await server.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A page that records console errors and uncaught exceptions. */
async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await newCeiledPage(browser, { viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  // A failed request is reported with its URL; the console's own line about it names none.
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && errors.push(m.text().slice(0, 300)));
  page.on('response', (r) => r.status() >= 400 && !askedAfterShutDown(r.status(), r.url()) && errors.push(`${r.status()} ${r.url().replace(/token=\w+/, 'token=…')}`));
  page.on('pageerror', (e) => errors.push(e.message.slice(0, 300)));
  return { page, errors };
}

/** Kernels this suite shut down itself: a page still open on the last notebook may ask after one once (404). */
const shutDownKernels = new Set<string>();

/** Whether a failed request is a page asking after a kernel this suite shut down, and nothing else. */
function askedAfterShutDown(status: number, url: string): boolean {
  const id = /\/api\/kernels\/([0-9a-f-]{36})(?:[/?]|$)/.exec(url)?.[1];
  return status === 404 && id !== undefined && shutDownKernels.has(id);
}

/** Shuts down every session (and its kernel) of the server through its REST API. */
async function shutDownSessions(server: LabServer): Promise<void> {
  const auth = { headers: { Authorization: `token ${server.token}` } };
  const sessions = (await (await fetch(`${server.base}/api/sessions`, auth)).json()) as { id: string; kernel?: { id: string } }[];
  for (const s of sessions) {
    if (s.kernel?.id) shutDownKernels.add(s.kernel.id);
    await fetch(`${server.base}/api/sessions/${s.id}`, { ...auth, method: 'DELETE' });
  }
}

/** Per kernel, the page that runs the notebooks and the page that reopens them, loaded once. */
const pages = new Map<string, { page: Page; errors: string[] }>();

async function pageFor(kernel: Kernel, role: 'run' | 'reopen'): Promise<{ page: Page; errors: string[] }> {
  const key = `${kernel}-${role}`;
  let entry = pages.get(key);
  if (!entry || entry.page.isClosed()) {
    entry = await newPage();
    const server = servers.get(kernel)!;
    await loadLab(entry.page, { base: server.base, token: server.token, workspace: key });
    pages.set(key, entry);
  }
  return entry;
}

/**
 * Opens, runs, checks and saves one notebook under one kernel in the kernel's run page, then
 * reopens the saved file in the reopen page, which never had it open; returns what a check
 * needs. The notebook's tab is closed before its kernel is shut down: a page still connected to
 * a kernel logs its websocket failing when the kernel goes. After a failure both pages are
 * dropped, so that the next notebook starts from fresh pages.
 */
async function readInLab(kernel: Kernel, file: string) {
  const server = servers.get(kernel)!;
  let current: Page | undefined;
  const phases: [string, number][] = [];
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases.push([name, Math.round(now - mark)]);
    mark = now;
  };
  try {
    const first = await pageFor(kernel, 'run');
    const firstErrors = first.errors.length;
    current = first.page;
    await openInPage(first.page, { file, kernel: true });
    phase('open');
    const opened = await readOpenNotebook(first.page);
    await runAll(first.page, CONFIG.notebookTimeoutMs);
    phase('run all');
    const ran = await readOpenNotebook(first.page);
    const figures = await drawnFigures(first.page);
    const tables = await renderedTables(first.page);
    phase('read');
    await save(first.page);
    await closeInPage(first.page, file);
    await shutDownSessions(server);
    phase('save and shut down');
    const second = await pageFor(kernel, 'reopen');
    const secondErrors = second.errors.length;
    current = second.page;
    await openInPage(second.page, { file, kernel: false });
    const figuresAgain = await drawnFigures(second.page);
    phase('reopen');
    // jupyterlab-plotly would now add an image/png to every figure and mark the notebook modified.
    await second.page.waitForTimeout(1000);
    const reopened = await readOpenNotebook(second.page);
    await closeInPage(second.page, file);
    phase('wait');
    return { opened, ran, figures, tables, figuresAgain, reopened, pageErrors: [...first.errors.slice(firstErrors), ...second.errors.slice(secondErrors)], phases };
  } catch (e) {
    fs.mkdirSync(CONFIG.shots, { recursive: true });
    const shot = path.join(CONFIG.shots, `${kernel}-${file.replace(/\//g, '-')}.png`);
    await current?.screenshot({ path: shot }).catch(() => undefined);
    for (const role of ['run', 'reopen']) {
      await pages.get(`${kernel}-${role}`)?.page.close().catch(() => undefined);
      pages.delete(`${kernel}-${role}`);
    }
    throw new Error(`${(e as Error).message}\nscreenshot: ${shot}\nserver log, last lines:\n${server.log().split('\n').slice(-25).join('\n')}`);
  } finally {
    // Every kernel the notebook started, shut down once no tab is connected to it.
    await shutDownSessions(server);
  }
}

const plotlyOutputs = (cells: { outputs?: { data?: Record<string, unknown> }[] }[]): number => cells.reduce((n, c) => n + (c.outputs ?? []).filter((o) => o.data?.[PLOTLY_MIME] !== undefined).length, 0);
const isDrawn = (f: { traces: number; width: number; height: number }): boolean => f.traces > 0 && f.width > 0 && f.height > 0;

const SELECTED = FILES.filter((f) => !CONFIG.only || CONFIG.only.includes(f));
/** Whether a saved copy was run to the end: every code cell has an execution count. */
const ranToTheEnd = (file: string): boolean => fs.existsSync(file) && readNotebook(file).cells.every((c) => c.cell_type !== 'code' || (c as { execution_count?: number | null }).execution_count != null);

// The two kernels read the notebooks side by side, each on its own server and pages: the Deno
// half in reverse order, so that the long chapters (6-8 of each edition) of one kernel meet the
// short ones of the other rather than each other. Run one after the other they took 425 and
// 377 s (2026-12-01 21:38 UTC, load average 0.7-7); side by side the longer of the two decides.
it('forgives only a 404 about a kernel the suite shut down itself', () => {
  const id = '410bf413-8565-40bb-a98d-c4af547d8441';
  shutDownKernels.add(id);
  assert.equal(askedAfterShutDown(404, `http://127.0.0.1:1/api/kernels/${id}?1796306363129`), true);
  assert.equal(askedAfterShutDown(500, `http://127.0.0.1:1/api/kernels/${id}`), false, 'a server error is still an error');
  assert.equal(askedAfterShutDown(404, 'http://127.0.0.1:1/api/kernels/00000000-0000-0000-0000-000000000000'), false, 'another kernel is still an error');
  assert.equal(askedAfterShutDown(404, `http://127.0.0.1:1/files/${id}`), false, 'another route is still an error');
  shutDownKernels.delete(id);
});

describe('the notebooks in JupyterLab', { concurrency: KERNELS.length }, () => {
  for (const kernel of KERNELS) {
    describe(`the notebooks in JupyterLab with the ${kernel} kernel`, { concurrency: 1 }, () => {
      for (const file of kernel === 'deno' ? [...SELECTED].reverse() : SELECTED) {
        it(`runs ${file}, draws its figures and tables, and reopens it unchanged`, { timeout: CONFIG.notebookTimeoutMs + 6 * HANG_MS }, async (t) => {
          const started = performance.now();
          const seen = await readInLab(kernel, file);
          t.diagnostic(`${kernel} ${file}: ${((performance.now() - started) / 1000).toFixed(1)} s (${seen.phases.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(1)}`).join(', ')})`);
          assert.equal(seen.opened.kernel, kernel, 'the kernel JupyterLab started for the notebook');
          const code = seen.ran.cells.filter((c) => c.type === 'code');
          assert.deepEqual(errorOutputs(seen.ran.cells), [], 'no cell shows an error or writes to stderr');
          assert.deepEqual(code.filter((c) => c.executionCount === null).map((c) => c.source.split('\n')[0]), [], 'every code cell ran');
          assert.equal(plotlyOutputs(seen.ran.cells), calls(seen.ran.cells, 'showFigure'), 'one figure output per showFigure call');
          assert.equal(seen.figures.filter(isDrawn).length, calls(seen.ran.cells, 'showFigure'), `every figure drawn: ${JSON.stringify(seen.figures)}`);
          assert.equal(seen.tables, calls(seen.ran.cells, 'showTable'), 'every showTable rendered');
          const saved = readNotebook(path.join(CONFIG.work, kernel, file));
          assert.equal(plotlyOutputs(saved.cells), seen.figures.length, 'the saved file holds every figure');
          assert.equal(seen.reopened.dirty, false, 'reopening the executed notebook does not mark it modified');
          assert.equal(seen.figuresAgain.filter(isDrawn).length, seen.figures.length, `every figure drawn after reopening: ${JSON.stringify(seen.figuresAgain)}`);
          assert.deepEqual(seen.pageErrors, [], 'no console error on either page');
        });
      }

      it(`shows every line a cell prints, in its cell (${LATE_LINES} lines, then a second cell)`, { timeout: CONFIG.notebookTimeoutMs + 6 * HANG_MS }, async () => {
        const seen = await readInLab(kernel, 'late-output.ipynb');
        assert.equal(seen.opened.kernel, kernel);
        const [first, second] = cellOutputs({ cells: seen.ran.cells.map((c) => ({ cell_type: c.type, source: c.source, outputs: c.outputs })) } as never);
        assert.equal(first.stdout.length, LATE_LINES);
        assert.equal(first.stdout[LATE_LINES - 1], `line ${LATE_LINES - 1}`);
        assert.equal(second.stdout[0], 'second cell');
        assert.deepEqual(second.stdout.filter((l) => l.startsWith('line ')), [], 'no line of the first cell lands in the second');
        // tslab prints a cell's value on stdout, Deno sends it as the execute_result.
        assert.ok(second.results === 1 || second.stdout.includes('42'), `the second cell's value: ${JSON.stringify(second)}`);
      });

      // In the last kernel's half: side by side the tslab half is the longer (370 s against 280 in
      // a CI run on 2026-12-01), and the figure is the same JSON under either kernel.
      if (kernel === KERNELS[KERNELS.length - 1]) {
        it(`draws ${FIGURE_FILE}'s figure as the site draws its JSON`, { timeout: CONFIG.notebookTimeoutMs + 6 * HANG_MS }, async (t) => {
          const saved = path.join(CONFIG.work, kernel, FIGURE_FILE);
          if (!fs.existsSync(saved) || readNotebook(saved).cells.every((c) => !c.outputs?.length)) await readInLab(kernel, FIGURE_FILE);
          const site = await siteFigure(browser, saved, tmp, { width: 1280, height: 900 });
          const { page, errors } = await pageFor(kernel, 'reopen');
          const before = errors.length;
          try {
            await openInPage(page, { file: FIGURE_FILE, kernel: false });
            await drawnFigures(page); // scrolls the figure's cell into view, where JupyterLab renders it
            const lab = await shootFigure(page, { label: 'JupyterLab', chart: '.tfjs-accumulate-plotly', column: '.jp-OutputArea-output' });
            const { differing } = await pixelDifference(page, site.shot.png, lab.png);
            t.diagnostic(`site ${site.shot.width} x ${site.shot.height} in ${site.shot.column}, JupyterLab ${lab.width} x ${lab.height} in ${lab.column}; ${(differing * 100).toFixed(3)}% of pixels apart at the common width`);
            assert.deepEqual(compareShots(site.shot, lab, differing), [], 'JupyterLab draws the site’s figure (test:classic holds the case that must fail)');
            assert.deepEqual(errors.slice(before), []);
          } finally {
            // The tab goes, and with it the width the comparison gave its chart.
            await closeInPage(page, FIGURE_FILE).catch(() => undefined);
            await site.page.close();
          }
        });
      }

      it('shows a failing cell as a failure (the checks above can fail)', { timeout: CONFIG.notebookTimeoutMs + 6 * HANG_MS }, async (t) => {
        const traced = fs.existsSync(proxyTrace()) ? fs.statSync(proxyTrace()).size : 0;
        const seen = await readInLab(kernel, 'runtime-error.ipynb');
        assert.equal(seen.opened.kernel, kernel);
        const errors = errorOutputs(seen.ran.cells);
        assert.ok(errors.some((e) => e.includes('RangeError')), `errors seen: ${JSON.stringify(errors)}`);
        const never = seen.ran.cells.filter((c) => c.type === 'code')[2];
        if (kernel === 'tslab') {
          assert.equal(never.executionCount, null, 'Run All stops at the failing cell');
          return;
        }
        // Under Deno the proxy decides, and its trace says what reached it when. Run All's last
        // request can arrive after the failing cell and the proxy's window (0.2 s) are over, on
        // a busy machine; ipykernel and tslab then run it too. Everything else must be aborted.
        const events = proxyEvents(traced);
        const failure = events.find((e) => e.event === 'finish' && e.failed);
        const request = events.filter((e) => e.event === 'request')[2];
        assert.ok(failure && request, `the proxy's trace: ${JSON.stringify(events)}`);
        const aborted = events.some((e) => e.event === 'abort' && e.msg_id === request.msg_id);
        t.diagnostic(`the last cell's request reached the proxy ${((request.t - failure.t) * 1000).toFixed(1)} ms after the failing cell was done; ${aborted ? 'aborted' : 'ran'}`);
        assert.equal(never.executionCount === null, aborted, 'JupyterLab shows the cell as the proxy answered it');
        if (!aborted) assert.ok(request.t >= failure.aborting_until!, `the proxy ran a request that reached it before the failure's window closed: ${JSON.stringify(events)}`);
      });
    });
  }
});

// Once both kernels are done: every cell shows as many lines under Deno as under tslab, both
// read in JupyterLab and saved from there.
if (KERNELS.length === ALL_KERNELS.length) {
  describe('Deno against tslab in JupyterLab', () => {
    for (const file of SELECTED) {
      it(`${file}: no cell shows fewer lines, displays or results under Deno`, (t) => {
        const [tslabFile, denoFile] = ALL_KERNELS.map((k) => path.join(CONFIG.work, k, file));
        for (const [kernel, f] of [['tslab', tslabFile], ['deno', denoFile]]) assert.ok(ranToTheEnd(f), `the ${kernel} run of ${file} did not reach its end (its test above says why)`);
        const [tslabNb, denoNb] = [readNotebook(tslabFile), readNotebook(denoFile)];
        t.diagnostic(`stdout lines per code cell, tslab ${JSON.stringify(cellOutputs(tslabNb).map((c) => c.stdout.length))}, deno ${JSON.stringify(cellOutputs(denoNb).map((c) => c.stdout.length))}`);
        assert.deepEqual(findLosses(tslabNb, denoNb), [], `${file}: cells that showed less under Deno than under tslab in JupyterLab`);
      });
    }
  });
}
