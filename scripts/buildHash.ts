/**
 * Whether `dist/` was built from the sources as they are now, so that a test part can skip a
 * rebuild that would produce the same files.
 *
 *     node --import tsx scripts/buildHash.ts --write   # after a build: record what it was built from
 *     node --import tsx scripts/buildHash.ts --check   # exit 0 if dist/ is current, 1 otherwise
 *
 * `npm run build` ends with `--write`; `npm run build:if-stale` (used by the test parts after
 * `test:unit`'s build) runs `--check` and builds only when it fails. `npm test` thus builds once
 * instead of seven times. The hash covers every input of the build: `src/`, both tsconfigs, the
 * ESM script and package.json (its `sideEffects` reach `dist/esm/package.json`).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

export interface BuildHashArgs {
  /** The package root. Default: this repository. */
  root?: string;
}

/** The file that records the hash, inside `dist/` so that `npm run build`'s clean removes it. */
export const HASH_FILE = path.join('dist', '.source-hash');

/** The build's inputs, relative to the root, sorted. */
function inputs(root: string): string[] {
  const files = ['package.json', 'tsconfig.json', 'tsconfig.build.json', path.join('scripts', 'buildEsm.ts')];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.push(rel);
    }
  };
  walk('src');
  return files.sort();
}

/** A hash of every build input's path and bytes. */
export function sourceHash(args: BuildHashArgs = {}): string {
  const root = args.root ?? ROOT;
  const hash = createHash('sha256');
  for (const rel of inputs(root)) {
    const file = path.join(root, rel);
    if (!fs.existsSync(file)) continue;
    hash.update(`${rel.split(path.sep).join('/')}\0`);
    hash.update(fs.readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** True when `dist/` holds a build recorded from exactly the current inputs. */
export function isBuildCurrent(args: BuildHashArgs = {}): boolean {
  const root = args.root ?? ROOT;
  const file = path.join(root, HASH_FILE);
  if (!fs.existsSync(file) || !fs.existsSync(path.join(root, 'dist', 'index.js'))) return false;
  return fs.readFileSync(file, 'utf8').trim() === sourceHash({ root });
}

export function writeBuildHash(args: BuildHashArgs = {}): void {
  const root = args.root ?? ROOT;
  fs.writeFileSync(path.join(root, HASH_FILE), `${sourceHash({ root })}\n`);
}

function main(): void {
  const [flag] = process.argv.slice(2);
  if (flag === '--write') writeBuildHash();
  else if (flag === '--check') {
    const current = isBuildCurrent();
    console.log(current ? 'build: dist/ was built from the current sources; not rebuilding' : 'build: dist/ is missing or older than the sources; building');
    process.exit(current ? 0 : 1);
  } else {
    console.error(`buildHash: expected --write or --check; got ${JSON.stringify(flag ?? '')}`);
    process.exit(2);
  }
}

if (require.main === module) main();
