/**
 * `npm test`: every test of the project, each part timed, with a summary at the end. Four stages,
 * one after the other; the third runs three lanes side by side (see STAGES):
 *
 *   1. systemDeps     the Debian packages the later parts need (scripts/systemDeps.sh; installs
 *                     what is missing, including libopenblas-dev for the native kernels)
 *      native:build   the optional native addon, strictly: CI must build and test the native path
 *   2. test:unit      build, type-check, unit tests (includes the runner/site tests on fixtures);
 *                     the kernel parity and leak tests run on wasm, cpu and native, and with
 *                     TFJS_ACCUMULATE_REQUIRE_NATIVE=1 an unbuilt addon fails them
 *   3. lane one:
 *      test:notebooks the runner on every notebook (sources must be committed clean)
 *      test:site      the static site export of the executed notebooks
 *      test:classic   every notebook run by a reader in classic Notebook, in headless Chromium
 *      lane two:
 *      test:jupyter   every notebook through Debian's `jupyter nbconvert --execute` and tslab
 *      check:deno     `deno check` on every notebook's cells (Deno's kernel does not type-check)
 *      test:deno      every notebook through nbconvert under Deno, compared cell by cell with tslab
 *      lane three:
 *      test:lab       every notebook of both editions read in JupyterLab (lab/'s app, installed and
 *                     built when stale) under tslab and under Deno
 *   4. test:browser   the site in headless Chromium (console errors, one chart per Plotly output,
 *                     axe-core in light and dark, phone layout, search, Lighthouse mobile scores)
 *      test:browser-lib the library in headless Chromium on WebGL, wasm and WebGPU (if usable),
 *                     and the site's "run it in your browser" blocks
 *
 * The parts after test:unit reuse its build (`npm run build:if-stale`), and test:deno reuses
 * test:jupyter's tslab runs as its reference (test/helpers/tslabReference.ts), so no notebook is
 * executed twice by the same front end and kernel.
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
 * Stages in order; a stage's lanes side by side. The lanes of stage three share nothing: each
 * part starts its own servers on free ports, and kernels from temporary prefixes, and all read
 * the build test:unit wrote. Why lanes: the parts wait for pages, servers and kernels much of the
 * time (in turn, a run kept 1.11 cores busy over 29 min 17 s; /usr/bin/time). The browser tests
 * run alone afterwards: Lighthouse's performance score falls with the CPU others take (88 against
 * the 90 it needs, on 02-model.html, when they ran beside the notebooks, 2026-12-02).
 */
const STAGES: Stage[] = [
  [[{ name: 'systemDeps', command: ['bash', 'scripts/systemDeps.sh'] }, npmRun('native:build')]],
  [[npmRun('test:unit', { TFJS_ACCUMULATE_REQUIRE_NATIVE: '1' })]],
  [
    [npmRun('test:notebooks'), npmRun('test:site'), npmRun('test:classic')],
    [npmRun('test:jupyter'), npmRun('check:deno'), npmRun('test:deno')],
    [npmRun('test:lab')],
  ],
  [[npmRun('test:browser'), npmRun('test:browser-lib')]],
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
  // Node's tests are counted one by one; a part without tests (systemDeps, the notebook run, the
  // site export) counts as one.
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

void main();
