import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildEsm } from '../../scripts/buildEsm';

/** A small source tree: a file import, a folder import, a type-only import, a re-export. */
const SOURCES: Record<string, string> = {
  'index.ts': "export { twice } from './math';\nexport { ONE } from './consts';\nexport type { Pair } from './math';\nexport async function lazy() { return (await import('./math')).twice(2); }\n",
  'math.ts': "import { ONE } from './consts';\nimport type { Kind } from './consts/kind';\nexport interface Pair { a: number; b: number }\nexport const twice = (x: number): number => 2 * x * ONE;\nexport const kind: Kind | undefined = undefined;\n",
  'consts/index.ts': 'export const ONE = 1;\n',
  'consts/kind.ts': "export type Kind = 'a' | 'b';\n",
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'build-esm-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function build(sources: Record<string, string>, name: string): string {
  const src = path.join(tmp, name, 'src');
  for (const [file, code] of Object.entries(sources)) {
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    fs.writeFileSync(path.join(src, file), code);
  }
  const out = path.join(tmp, name, 'esm');
  buildEsm({ src, out, sideEffects: ['./consts/*.js'] });
  return out;
}

describe('scripts/buildEsm.ts', () => {
  it('writes ES modules whose relative imports name files, and Node runs them', async () => {
    const out = build(SOURCES, 'ok');
    const index = fs.readFileSync(path.join(out, 'index.js'), 'utf8');
    assert.match(index, /from "\.\/math\.js"/);
    assert.match(index, /from "\.\/consts\/index\.js"/);
    assert.match(index, /import\("\.\/math\.js"\)/);
    assert.doesNotMatch(index, /Pair/, 'type-only exports are erased');
    assert.doesNotMatch(fs.readFileSync(path.join(out, 'math.js'), 'utf8'), /consts\/kind/, 'type-only imports are erased');
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(out, 'package.json'), 'utf8')), { type: 'module', sideEffects: ['./consts/*.js'] });
    const mod = (await import(pathToFileURL(path.join(out, 'index.js')).href)) as { twice(x: number): number; ONE: number; lazy(): Promise<number> };
    assert.equal(mod.twice(21), 42);
    assert.equal(mod.ONE, 1);
    assert.equal(await mod.lazy(), 4);
  });

  it('fails on a relative import that names no source file', () => {
    assert.throws(() => build({ 'index.ts': "export { x } from './missing';\n" }, 'broken'), /cannot resolve '\.\/missing' to a source file/);
  });

  it('builds every module of src/ and keeps the package sideEffects list', () => {
    const built = path.join(__dirname, '..', '..', 'dist', 'esm');
    assert.ok(fs.existsSync(built), 'dist/esm is missing: run `npm run build` first');
    const pkg = JSON.parse(fs.readFileSync(path.join(built, 'package.json'), 'utf8')) as { sideEffects: string[] };
    assert.deepEqual(pkg.sideEffects, ['./core/norm/*.js', './core/peers.js']);
    const sources = fs.readdirSync(path.join(__dirname, '..', '..', 'src'), { recursive: true }).map(String).filter((f) => f.endsWith('.ts'));
    for (const f of sources) assert.ok(fs.existsSync(path.join(built, f.replace(/\.ts$/, '.js'))), `dist/esm lacks ${f}`);
  });
});
