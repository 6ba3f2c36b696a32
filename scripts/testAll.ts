/**
 * `npm test`: every test of the project, in order, each part timed, with a summary at the end.
 *
 *   1. the Debian packages the later parts need (scripts/systemDeps.sh; installs what is missing,
 *      including libopenblas-dev for the native kernels)
 *      native:build   the optional native addon, strictly: CI must build and test the native path
 *   2. test:unit      build, type-check, unit tests (includes the runner/site tests on fixtures);
 *                     the kernel parity and leak tests run on wasm, cpu and native, and with
 *                     TFJS_ACCUMULATE_REQUIRE_NATIVE=1 an unbuilt addon fails them
 *   3. test:notebooks the runner on every notebook (sources must be committed clean)
 *   4. test:site      the static site export of the executed notebooks
 *   5. test:browser   the site in headless Chromium (console errors, one chart per Plotly output,
 *                     axe-core in light and dark, phone layout, search, Lighthouse mobile scores)
 *      test:browser-lib the library in headless Chromium on WebGL, wasm and WebGPU (if usable),
 *                     and the site's "run it in your browser" blocks
 *   6. test:jupyter   every notebook through Debian's `jupyter nbconvert --execute` and tslab
 *   7. test:classic   every notebook run by a reader in classic Notebook, in headless Chromium
 *   8. check:deno     `deno check` on every notebook's cells (Deno's kernel does not type-check)
 *   9. test:deno      every notebook through nbconvert under Deno, compared cell by cell with tslab
 *  10. test:lab       every notebook of both editions read in JupyterLab (lab/'s app, installed and
 *                     built when stale) under tslab and under Deno
 *
 * The parts after test:unit reuse its build (`npm run build:if-stale`), and test:deno reuses
 * test:jupyter's tslab runs as its reference (test/helpers/tslabReference.ts), so no notebook is
 * executed twice by the same front end and kernel.
 *
 * A failing part does not stop the later ones, so one run shows every failure; the exit code is
 * non-zero if any part failed.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(__dirname, '..');

const CONFIG = {
  parts: [
    { name: 'systemDeps', command: ['bash', 'scripts/systemDeps.sh'] },
    { name: 'native:build', command: ['npm', 'run', '--silent', 'native:build'] },
    { name: 'test:unit', command: ['npm', 'run', '--silent', 'test:unit'], env: { TFJS_ACCUMULATE_REQUIRE_NATIVE: '1' } },
    { name: 'test:notebooks', command: ['npm', 'run', '--silent', 'test:notebooks'] },
    { name: 'test:site', command: ['npm', 'run', '--silent', 'test:site'] },
    { name: 'test:browser', command: ['npm', 'run', '--silent', 'test:browser'] },
    { name: 'test:browser-lib', command: ['npm', 'run', '--silent', 'test:browser-lib'] },
    { name: 'test:jupyter', command: ['npm', 'run', '--silent', 'test:jupyter'] },
    { name: 'test:classic', command: ['npm', 'run', '--silent', 'test:classic'] },
    { name: 'check:deno', command: ['npm', 'run', '--silent', 'check:deno'] },
    { name: 'test:deno', command: ['npm', 'run', '--silent', 'test:deno'] },
    { name: 'test:lab', command: ['npm', 'run', '--silent', 'test:lab'] },
  ],
};

interface PartResult {
  name: string;
  ok: boolean;
  seconds: number;
  /** Tests counted by Node's test runner in this part; a part without tests counts as one. */
  passed: number;
  failed: number;
}

/** Runs a command with its output shown live and kept, to read the test runner's counts. */
function run(command: string[], env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (b: Buffer) => {
      process.stdout.write(b);
      output += b;
    });
    child.stderr.on('data', (b: Buffer) => {
      process.stderr.write(b);
      output += b;
    });
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Sums Node test runner totals ("ℹ pass 12" from the spec reporter, "# pass 12" from TAP). */
function counts(output: string): { passed: number; failed: number } | undefined {
  const sum = (word: string): number => [...output.matchAll(new RegExp(`^(?:ℹ|#) ${word} (\\d+)$`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0);
  const found = /^(?:ℹ|#) tests \d+$/m.test(output);
  return found ? { passed: sum('pass'), failed: sum('fail') + sum('cancelled') } : undefined;
}

async function main(): Promise<void> {
  const results: PartResult[] = [];
  for (const part of CONFIG.parts) {
    console.log(`\n===== ${part.name}: ${part.command.join(' ')}\n`);
    const t0 = performance.now();
    const { code, output } = await run(part.command, 'env' in part ? part.env : {});
    const seconds = (performance.now() - t0) / 1000;
    const c = counts(output);
    const ok = code === 0;
    results.push({ name: part.name, ok, seconds, passed: c?.passed ?? (ok ? 1 : 0), failed: c ? Math.max(c.failed, ok ? 0 : 1) : ok ? 0 : 1 });
    console.log(`\n===== ${part.name}: ${ok ? 'ok' : `FAILED (exit ${code})`} in ${seconds.toFixed(1)} s`);
  }
  const width = Math.max(...results.map((r) => r.name.length));
  console.log(`\n${'part'.padEnd(width)}      time  result`);
  for (const r of results) {
    console.log(`${r.name.padEnd(width)}  ${`${r.seconds.toFixed(1)} s`.padStart(8)}  ${r.ok ? 'ok' : 'FAILED'} (${r.passed} passed, ${r.failed} failed)`);
  }
  const total = results.reduce((s, r) => s + r.seconds, 0);
  console.log(`${'total'.padEnd(width)}  ${`${total.toFixed(1)} s`.padStart(8)}`);
  const passed = results.reduce((s, r) => s + r.passed, 0);
  const failed = results.reduce((s, r) => s + r.failed, 0);
  // Node's tests are counted one by one; a part without tests (systemDeps, the notebook run, the
  // site export) counts as one.
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

void main();
