import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readNotebook, type NotebookJson } from '../../scripts/deno/notebooks';

// test:jupyter executes every notebook under tslab with nbconvert, and test:deno needs exactly
// that run as its reference: the same command, the same config, the same build. So test:jupyter
// keeps its executed copies here, each with the key of what produced it, and test:deno reuses a
// copy whose key still matches instead of running tslab a second time (npm test runs the two in
// that order; run alone, test:deno executes tslab itself).
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

/** The kept tslab run of `notebook`, if it was made from the notebook and build as they are now. */
export function loadTslabReference(notebook: string): NotebookJson | undefined {
  const out = target(notebook);
  if (!fs.existsSync(out) || !fs.existsSync(`${out}.key`)) return undefined;
  return fs.readFileSync(`${out}.key`, 'utf8') === key(notebook) ? readNotebook(out) : undefined;
}
