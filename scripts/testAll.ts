/**
 * `npm test`: every test of the project, each part timed (wall and CPU seconds), with a summary at
 * the end. The parts (STAGES below says which run side by side):
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
 * Stages: 1 the system packages and the addon; 2 test:unit alone; 3 the runner and the site beside test:consumer, test:jupyter and
 * check:deno; 4 the browser tests, classic then Deno, and JupyterLab, side by side.
 *
 * A failing part does not stop the later ones, so one run shows every failure; the exit code is
 * non-zero if any part failed. scripts/testLanes.ts runs the stages.
 */
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { orderProblems, Part, runStages, Stage } from './testLanes';

const ROOT = path.resolve(__dirname, '..');

const npmRun = (name: string, env?: Record<string, string>): Part => ({ name, command: ['npm', 'run', '--silent', name], ...(env ? { env } : {}) });

const unitEnv = { TFJS_ACCUMULATE_REQUIRE_NATIVE: '1' };

/**
 * Stages in order; a stage's lanes side by side, each lane's parts in order. After test:unit
 * (which keeps both cores busy by itself), the parts mostly wait for kernels, pages and servers,
 * so lanes use the second core: the runner beside the parts that need nothing it makes, then the
 * front ends that read its executed copies and the site side by side. A lane's order is what its
 * parts need: the site is made from the runner's copies; test:classic and test:lab compare their
 * figures with the site's; test:deno compares its lines with the runner's.
 *
 * Lanes had been taken out after three of four runs with them failed on what load breaks (docs/
 * testing.md): a split bound and chapter 8's transfer share (both fixed), Lighthouse's performance
 * score (now reported, not asserted), and a tslab kernel in JupyterLab whose port another process
 * took before the kernel bound it (EADDRINUSE). Kernels now survive that: tslab exits instead of
 * hanging, and servers and nbconvert start it again on new ports (scripts/jupyter/port_safe.py).
 */
/**
 * What each part needs done before it starts: the build and the native addon of test:unit (the
 * parts after it only rebuild when stale), the runner's executed copies, the site made of them.
 */
export const NEEDS: Record<string, string[]> = {
  'test:unit': ['native:build', 'systemDeps'],
  'test:consumer': ['test:unit'],
  'test:notebooks': ['test:unit'],
  'test:site': ['test:notebooks'],
  'test:browser': ['test:site'],
  'test:browser-lib': ['test:site'],
  'test:jupyter': ['test:unit'],
  'check:deno': ['test:unit'],
  'test:classic': ['test:site'],
  'test:deno': ['test:notebooks'],
  'test:lab': ['test:site'],
};

export const STAGES: Stage[] = [
  [[{ name: 'systemDeps', command: ['bash', 'scripts/systemDeps.sh'] }, npmRun('native:build')]],
  [[npmRun('test:unit', unitEnv)]],
  [
    [npmRun('test:notebooks'), npmRun('test:site')],
    [npmRun('test:consumer', unitEnv), npmRun('test:jupyter'), npmRun('check:deno')],
  ],
  [[npmRun('test:browser'), npmRun('test:browser-lib')], [npmRun('test:classic'), npmRun('test:deno')], [npmRun('test:lab')]],
];

async function main(): Promise<void> {
  const problems = orderProblems(STAGES, NEEDS);
  if (problems.length > 0) throw new Error(`scripts/testAll.ts: the stages break their order:\n${problems.join('\n')}`);
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

if (require.main === module) void main();
