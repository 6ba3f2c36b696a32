/**
 * The lab app of lab/ (JupyterLab 4 assembled from npm packages, docs/notebooks.md): installs its
 * packages from lab/package-lock.json and builds it with webpack, each only when its inputs
 * changed since the last time. `npm run lab` and the JupyterLab end-to-end test call this; the
 * root `npm ci` never installs lab/ (about 500 packages the library does not need).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(__dirname, '..', '..');

/** Options of {@link ensureLabApp}. */
export interface EnsureLabAppArgs {
  /** The app's folder. Default: lab/ of this repository. */
  dir?: string;
  /** Where npm's and webpack's output goes. Default: this process's stderr. */
  stdio?: 'inherit' | 'pipe';
}

/** What {@link ensureLabApp} did, with the seconds each step took (0 when skipped). */
export interface EnsureLabAppResult {
  installSeconds: number;
  buildSeconds: number;
}

/** The files whose content decides whether the installed packages are current. */
export const INSTALL_INPUTS = ['package.json', 'package-lock.json'];
/** The files whose content decides whether build/ is current (the lockfile pins the packages). */
export const BUILD_INPUTS = ['package-lock.json', 'index.js', 'plotlyRenderer.js', 'webpack.config.js', 'build.js'];
/** Where each step records the hash of the inputs it ran on, relative to the app's folder. */
export const STAMPS = { install: path.join('node_modules', '.tfjs-accumulate-inputs'), build: path.join('build', '.tfjs-accumulate-inputs') };

/** SHA-256 over the names and contents of `files` under `dir`; a missing file counts as empty. */
export function inputsHash(dir: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const f of files) {
    const file = path.join(dir, f);
    hash.update(`${f}\0`);
    hash.update(fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** True when the step's stamp is missing or was written for other inputs. */
export function isStale(dir: string, stamp: string, files: readonly string[]): boolean {
  const file = path.join(dir, stamp);
  return !fs.existsSync(file) || fs.readFileSync(file, 'utf8').trim() !== inputsHash(dir, files);
}

function step(dir: string, command: string[], what: string, stdio: 'inherit' | 'pipe'): number {
  const started = performance.now();
  const r = spawnSync(command[0], command.slice(1), { cwd: dir, stdio: ['ignore', stdio, stdio], encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const output = stdio === 'pipe' ? `\n${r.stdout ?? ''}${r.stderr ?? ''}` : '';
    throw new Error(`lab: ${what} failed (${command.join(' ')} in ${dir}, ${r.error?.message ?? `exit ${r.status}`}).${output}`);
  }
  return (performance.now() - started) / 1000;
}

/**
 * Installs lab/'s packages (`npm ci`, from npm's cache when it has them) and builds the app,
 * each only when stale. Throws, naming the step and the command, when one fails.
 */
export function ensureLabApp(args: EnsureLabAppArgs = {}): EnsureLabAppResult {
  const dir = args.dir ?? path.join(ROOT, 'lab');
  const stdio = args.stdio ?? 'inherit';
  if (!fs.existsSync(path.join(dir, 'package-lock.json'))) throw new Error(`lab: no package-lock.json in ${dir}; the lab app's folder is lab/ of this repository.`);
  const result: EnsureLabAppResult = { installSeconds: 0, buildSeconds: 0 };
  if (isStale(dir, STAMPS.install, INSTALL_INPUTS)) {
    // No install scripts: none of the app's packages needs one, and none should run unasked.
    result.installSeconds = step(dir, ['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund'], 'installing the lab app', stdio);
    fs.writeFileSync(path.join(dir, STAMPS.install), inputsHash(dir, INSTALL_INPUTS) + '\n');
  }
  if (isStale(dir, STAMPS.build, BUILD_INPUTS)) {
    result.buildSeconds = step(dir, [process.execPath, 'build.js'], 'building the lab app', stdio);
    fs.writeFileSync(path.join(dir, STAMPS.build), inputsHash(dir, BUILD_INPUTS) + '\n');
  }
  return result;
}

// `npm run lab:app`: npm test's part that readies the app at the start, beside the notebook run,
// instead of inside test:lab after it (on a fresh clone, 290-370 s of npm ci and webpack that
// test:lab spent before its first notebook, runs A and B of 2026-12-04).
if (require.main === module) {
  const r = ensureLabApp({ stdio: 'pipe' });
  console.log(`lab app: npm ci ${r.installSeconds.toFixed(1)} s, build ${r.buildSeconds.toFixed(1)} s (0 when up to date)`);
}
