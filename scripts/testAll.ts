/**
 * `npm test`: every test of the project, in order, each part timed (wall and CPU seconds), with a
 * summary at the end (see STAGES):
 *
 *   1. the Debian packages the later parts need (scripts/systemDeps.sh; installs what is missing,
 *      including libopenblas-dev for the native kernels)
 *      native:build   the optional native addon, strictly: CI must build and test the native path
 *   2. test:unit      build, type-check, unit tests (includes the runner/site tests on fixtures);
 *                     the kernel parity and leak tests run on wasm, cpu and native, and with
 *                     TFJS_ACCUMULATE_REQUIRE_NATIVE=1 an unbuilt addon fails them
 *      test:consumer  `npm pack`, installed into fresh projects beside tfjs 4.0.0 and 4.22.0 (and
 *                     refused beside 3.21.0): README.md's programs as written, a tsc-compiled
 *                     contract program, the native addon built by hand
 *   3. test:notebooks the runner on every notebook (sources must be committed clean)
 *   4. test:site      the static site export of the executed notebooks
 *   5. test:browser   the site in headless Chromium (console errors, one chart per Plotly output,
 *                     axe-core in light and dark, phone layout, search, Lighthouse mobile scores)
 *      test:browser-lib the library in headless Chromium on WebGL, wasm and WebGPU (if usable),
 *                     and the site's "run it in your browser" blocks
 *   6. test:jupyter   Debian's `jupyter nbconvert --execute` with the tslab kernelspec: fixtures and
 *                     a representative set of notebooks (test/helpers/frontEndSets.ts)
 *   7. test:classic   a representative set run by a reader in classic Notebook, in headless Chromium
 *   8. check:deno     `deno check` on every notebook's cells (Deno's kernel does not type-check)
 *   9. test:deno      every English chapter (and a Chinese one) through nbconvert under Deno,
 *                     compared cell by cell with the runner's tslab run
 *  10. test:lab       a representative set of both editions read in JupyterLab (lab/'s app,
 *                     installed and built when stale) under tslab and under Deno
 *
 * The parts after test:unit reuse its build (`npm run build:if-stale`), and test:deno reuses the
 * runner's (or test:jupyter's) tslab runs as its reference (test/helpers/tslabReference.ts), so no
 * notebook is executed twice by the same front end and kernel. Every chapter of both editions runs
 * in the runner; each other front end runs the notebooks that exercise what it adds
 * (docs/testing.md, "What each front end catches").
 *
 * A failing part does not stop the later ones, so one run shows every failure; the exit code is
 * non-zero if any part failed. scripts/testLanes.ts runs the stages.
 */
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Part, runStages, Stage } from './testLanes';

const ROOT = path.resolve(__dirname, '..');

const npmRun = (name: string, env?: Record<string, string>): Part => ({ name, command: ['npm', 'run', '--silent', name], ...(env ? { env } : {}) });

/**
 * Stages in order; a stage's lanes side by side. Every part has a stage of its own for now. Lanes
 * took `.ci/run` from 29 min 31 s to 22-26 min (docs/testing.md), since the parts mostly wait for
 * pages, servers and kernels, but three of the four runs with lanes failed, each on what load
 * breaks: measureParallelWindow's test and chapter 8's transfer share (both fixed), then in one
 * run Lighthouse's performance score (88 against 90) and a tslab kernel in JupyterLab whose port,
 * picked free by Jupyter, was taken before the kernel bound it (EADDRINUSE). Lanes come back once
 * kernels survive such a clash.
 */
const STAGES: Stage[] = [
  [[{ name: 'systemDeps', command: ['bash', 'scripts/systemDeps.sh'] }, npmRun('native:build')]],
  ...['test:unit', 'test:consumer', 'test:notebooks', 'test:site', 'test:browser', 'test:browser-lib', 'test:jupyter', 'test:classic', 'check:deno', 'test:deno', 'test:lab'].map(
    (name): Stage => [[npmRun(name, name === 'test:unit' || name === 'test:consumer' ? { TFJS_ACCUMULATE_REQUIRE_NATIVE: '1' } : undefined)]],
  ),
];

async function main(): Promise<void> {
  const t0 = performance.now();
  const results = await runStages(STAGES, { cwd: ROOT });
  const wall = (performance.now() - t0) / 1000;
  const width = Math.max(...results.map((r) => r.name.length));
  console.log(`\n${'part'.padEnd(width)}      time       CPU  result`);
  for (const r of results) {
    const cpu = r.cpuSeconds === null ? '—' : `${r.cpuSeconds.toFixed(1)} s`;
    console.log(`${r.name.padEnd(width)}  ${`${r.seconds.toFixed(1)} s`.padStart(8)}  ${cpu.padStart(8)}  ${r.ok ? 'ok' : 'FAILED'} (${r.passed} passed, ${r.failed} failed)`);
  }
  const total = results.reduce((s, r) => s + r.seconds, 0);
  // Parts of one stage overlap, so their sum is more than the run's wall time.
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

void main();
