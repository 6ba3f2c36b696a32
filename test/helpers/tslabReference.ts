import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readNotebook, type NotebookJson } from '../../scripts/deno/notebooks';

// test:deno compares every cell's output under Deno with the same notebook's under tslab. Its
// reference is, in this order: test:jupyter's nbconvert run of the notebook (kept here with the
// key of what produced it: notebook, build, nbconvert config), else the runner's executed copy
// from test:notebooks (build/notebooks/, the same tslab compiler and executor; used when it ran
// to the end on this very notebook after the current build), else none, and test:deno runs tslab
// itself. npm test runs test:notebooks and test:jupyter first, so no notebook runs under tslab
// twice for the comparison.
const ROOT = path.resolve(__dirname, '..', '..');
export const REFERENCE_DIR = path.join(ROOT, 'build', 'nbconvert-tslab');

/** What an executed copy depends on: the notebook, the build of the library, nbconvert's config. */
function key(notebook: string): string {
  const hash = createHash('sha256');
  for (const file of [notebook, path.join(ROOT, 'dist', '.source-hash'), path.join(ROOT, 'scripts', 'notebooks', 'nbconvert_config.py')]) {
    hash.update(fs.existsSync(file) ? fs.readFileSync(file) : 'missing');
    hash.update('\0');
  }
  return hash.digest('hex');
}

function target(notebook: string): string {
  const rel = path.relative(ROOT, notebook);
  return path.join(REFERENCE_DIR, rel.startsWith('..') ? path.basename(notebook) : rel);
}

/** Keeps `executed`, the tslab run of `notebook`, for a later reader of the same inputs. */
export function saveTslabReference(notebook: string, executed: string): void {
  const out = target(notebook);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.copyFileSync(executed, out);
  fs.writeFileSync(`${out}.key`, key(notebook));
}

/** Where the runner writes its executed copy of a notebook below notebooks/ (scripts/notebooks/runner.ts's outPath). */
export const RUNNER_DIR = path.join(ROOT, 'build', 'notebooks');

/** The code cells' sources, to tell whether an executed copy is of this notebook as it is now. */
const codeSources = (nb: NotebookJson): string[] => nb.cells.filter((c) => c.cell_type === 'code').map((c) => [c.source].flat().join(''));

/**
 * The runner's executed copy of `notebook` if it can stand for a tslab run of it now: the same
 * code, run to the end, written after the current build.
 */
export function runnerReference(notebook: string, runnerDir: string = RUNNER_DIR, notebooksDir: string = path.join(ROOT, 'notebooks')): NotebookJson | undefined {
  const rel = path.relative(notebooksDir, notebook);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const copy = path.join(runnerDir, rel);
  const built = path.join(ROOT, 'dist', '.source-hash');
  if (!fs.existsSync(copy) || !fs.existsSync(built) || fs.statSync(copy).mtimeMs < fs.statSync(built).mtimeMs) return undefined;
  const executed = readNotebook(copy);
  const runner = (executed.metadata as { 'tfjs-accumulate'?: { runner?: { status?: string } } } | undefined)?.['tfjs-accumulate']?.runner;
  if (runner?.status !== 'ok') return undefined;
  return JSON.stringify(codeSources(executed)) === JSON.stringify(codeSources(readNotebook(notebook))) ? executed : undefined;
}

/** The kept tslab run of `notebook` (see the comment at the top), if one matches it as it is now. */
export function loadTslabReference(notebook: string): NotebookJson | undefined {
  const out = target(notebook);
  if (fs.existsSync(out) && fs.existsSync(`${out}.key`) && fs.readFileSync(`${out}.key`, 'utf8') === key(notebook)) return readNotebook(out);
  return runnerReference(notebook);
}
