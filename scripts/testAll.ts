/**
 * `npm test`: every test of the project, each part timed (wall and CPU seconds), with a summary at
 * the end. The parts:
 *
 *   systemDeps     the Debian packages the later parts need (scripts/systemDeps.sh; installs what
 *                  is missing, including libopenblas-dev for the native kernels)
 *   build          dist/, once, before every part that loads the library
 *   native:build   the optional native addon, strictly: CI must build and test the native path
 *   lab:app        installs and builds the JupyterLab app of lab/ when stale, at the start, so
 *                  that test:lab finds it ready
 *   test:unit      type-check and unit tests (includes the runner/site tests on fixtures); the
 *                  kernel parity and leak tests run on wasm, cpu and native, and with
 *                  TFJS_ACCUMULATE_REQUIRE_NATIVE=1 an unbuilt addon fails them
 *   test:consumer  `npm pack`, installed into fresh projects beside tfjs 4.0.0 and 4.22.0 (and
 *                  refused beside 3.21.0): README.md's programs as written, a tsc-compiled
 *                  contract program, the native addon built by hand
 *   test:notebooks the runner on every notebook (sources must be committed clean)
 *   test:site      the static site export of the executed notebooks
 *   test:browser   the site in headless Chromium (console errors, one chart per Plotly output,
 *                  axe-core in light and dark, phone layout, search)
 *   test:lighthouse Lighthouse's mobile preset on one page of each kind: accessibility, best
 *                  practices and SEO (its own part, so that it runs beside the browser tests)
 *   test:browser-lib the library in headless Chromium on WebGL, wasm and WebGPU (if usable), and
 *                  the site's "run it in your browser" blocks
 *   test:jupyter   Debian's `jupyter nbconvert --execute` with the tslab kernelspec: fixtures and
 *                  a representative set of notebooks (test/helpers/frontEndSets.ts)
 *   test:classic   a representative set run by a reader in classic Notebook, in headless Chromium
 *   check:deno     `deno check` on every notebook's cells (Deno's kernel does not type-check)
 *   test:deno      a representative set of chapters through nbconvert under Deno, compared cell
 *                  by cell with the runner's tslab run
 *   test:lab       a representative set of both editions read in JupyterLab (lab/'s app,
 *                  installed and built when stale) under tslab and under Deno
 *
 * The parts after `build` reuse its output (`npm run build:if-stale`), and test:deno reuses the
 * runner's (or test:jupyter's) tslab runs as its reference (test/helpers/tslabReference.ts), so no
 * notebook is executed twice by the same front end and kernel. Every chapter of both editions runs
 * in the runner; each other front end runs the notebooks that exercise what it adds
 * (docs/testing.md, "What each front end catches").
 *
 * Each part starts once the parts it reads have ended (NEEDS below), up to four at a time; the
 * table at the end gives each part's time and CPU.
 *
 * A failing part does not stop the later ones, so one run shows every failure; the exit code is
 * non-zero if any part failed. scripts/testGraph.ts runs the parts.
 */
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Part, runGraph } from './testGraph';

const ROOT = path.resolve(__dirname, '..');

const npmRun = (name: string, env?: Record<string, string>): Part => ({ name, command: ['npm', 'run', '--silent', name], ...(env ? { env } : {}) });

const unitEnv = { TFJS_ACCUMULATE_REQUIRE_NATIVE: '1' };

/**
 * What each part reads, so must have ended before it starts: the system packages, the addon and
 * the build (test:unit and the parts after it only rebuild when stale, and two builds at once
 * would delete each other's dist/), the runner's executed copies, the site made of them
 * (test:classic and test:lab compare their figures with the site's; test:deno compares its lines
 * with the runner's).
 */
export const NEEDS: Record<string, string[]> = {
  'native:build': ['systemDeps'],
  'test:unit': ['build', 'native:build'],
  'test:notebooks': ['build', 'native:build'],
  'test:site': ['test:notebooks'],
  'test:lab': ['test:site', 'lab:app'],
  'test:classic': ['test:site'],
  'test:deno': ['test:notebooks'],
  'test:browser': ['test:site'],
  'test:lighthouse': ['test:site'],
  'test:browser-lib': ['test:site'],
  'test:jupyter': ['build', 'systemDeps'],
  'test:consumer': ['build', 'native:build'],
  'check:deno': ['build'],
};

/**
 * Every part, in the order they start when several are ready: the longest chain first (the
 * runner, the site, then the front ends, the longest of them first: JupyterLab 430 s and the
 * site's browser tests 375 s in run J, classic 236, Deno 178), test:unit beside it from the start
 * (it needs only the build and ends no chain), and the short parts in the gaps.
 */
export const PARTS: Part[] = [
  { name: 'systemDeps', command: ['bash', 'scripts/systemDeps.sh'] },
  npmRun('build'),
  npmRun('native:build'),
  npmRun('test:notebooks'),
  npmRun('test:unit', unitEnv),
  npmRun('lab:app'),
  npmRun('test:site'),
  npmRun('test:lab'),
  npmRun('test:browser'),
  npmRun('test:lighthouse'),
  npmRun('test:classic'),
  npmRun('test:deno'),
  npmRun('test:browser-lib'),
  npmRun('test:jupyter'),
  npmRun('test:consumer', unitEnv),
  npmRun('check:deno'),
];

async function main(): Promise<void> {
  const t0 = performance.now();
  const results = await runGraph(PARTS, NEEDS, { cwd: ROOT });
  const wall = (performance.now() - t0) / 1000;
  const width = Math.max(...results.map((r) => r.name.length));
  console.log(`\n${'part'.padEnd(width)}      time       CPU  result`);
  for (const r of results) {
    const cpu = r.cpuSeconds === null ? '—' : `${r.cpuSeconds.toFixed(1)} s`;
    console.log(`${r.name.padEnd(width)}  ${`${r.seconds.toFixed(1)} s`.padStart(8)}  ${cpu.padStart(8)}  ${r.ok ? 'ok' : 'FAILED'} (${r.passed} passed, ${r.failed} failed)`);
  }
  const total = results.reduce((s, r) => s + r.seconds, 0);
  // Parts overlap, so their sum is more than the run's wall time.
  console.log(`${'sum of parts'.padEnd(width)}  ${`${total.toFixed(1)} s`.padStart(8)}`);
  console.log(`${'wall'.padEnd(width)}  ${`${wall.toFixed(1)} s`.padStart(8)}`);
  const passed = results.reduce((s, r) => s + r.passed, 0);
  const failed = results.reduce((s, r) => s + r.failed, 0);
  // The failures again, after the table, so that the last lines of the log say why.
  for (const r of results.filter((r) => r.failures.length > 0)) console.log(`\n===== ${r.name}, failing tests again:\n${r.failures.join('\n')}`);
  // Node's tests are counted one by one; a part without tests (systemDeps, the notebook run, the
  // site export) counts as one.
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

if (require.main === module) void main();
