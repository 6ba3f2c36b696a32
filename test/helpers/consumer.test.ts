import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { consumerEnv, markdownPrograms, ReadmeProgramError, REFUSED_TFJS, SUPPORTED_TFJS, unexpectedStderr } from './consumer';

const ROOT = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> };

describe("the consumer test's rules", () => {
  it("takes README.md's programs: js blocks named by their first line; shell and text blocks are no programs", () => {
    const programs = markdownPrograms(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    assert.ok(programs.length >= 2);
    for (const p of programs) assert.match(p.code, new RegExp(`^// ${p.file.replace('.', '\\.')}`));
    assert.deepEqual(markdownPrograms('```sh\nnpm test\n```\n\n```text\nbackend: wasm\n```\n\n```\nplain\n```\n'), []);
    assert.deepEqual(markdownPrograms("```js\n// a.cjs: CommonJS\nrequire('x');\n```\n"), [{ file: 'a.cjs', code: "// a.cjs: CommonJS\nrequire('x');\n" }]);
  });

  it('refuses what cannot be run as written: a ts block, a js fragment without its file, two programs of one name', () => {
    assert.throws(() => markdownPrograms("```ts\nconst x: number = 1;\n```\n"), ReadmeProgramError);
    assert.throws(() => markdownPrograms('```js\nfor (const { xs, ys } of microBatches) step(xs, ys);\n```\n'), /first line is not `\/\/ <name>\.mjs`/);
    assert.throws(() => markdownPrograms('```js\n// a.js\n```\n'), ReadmeProgramError, 'a .js file is ESM or CommonJS depending on its package.json');
    assert.throws(() => markdownPrograms('```js\n// a.mjs\n1;\n```\n\n```js\n// a.mjs\n2;\n```\n'), /two programs named a\.mjs/);
  });

  it("tests the ends of the peer range: its lower bound and the repo's own pinned tfjs; 3.x is outside it", () => {
    assert.equal(pkg.peerDependencies['@tensorflow/tfjs'], `^${SUPPORTED_TFJS[0]}`);
    assert.equal(SUPPORTED_TFJS[SUPPORTED_TFJS.length - 1], pkg.devDependencies['@tensorflow/tfjs']);
    assert.ok(Number(REFUSED_TFJS.split('.')[0]) < Number(SUPPORTED_TFJS[0].split('.')[0]));
  });

  it("lets through tfjs's own banner on stderr and nothing else", () => {
    const banner = '============================\nHi, looks like you are running TensorFlow.js in Node.js. To speed things up dramatically, install our node backend, visit https://github.com/tensorflow/tfjs-node for more details. \n============================\n';
    assert.deepEqual(unexpectedStderr(banner), []);
    assert.deepEqual(unexpectedStderr(`${banner}The kernel 'Abs' for backend 'cpu' is already registered\n`), ["The kernel 'Abs' for backend 'cpu' is already registered"]);
    assert.deepEqual(unexpectedStderr('tfjs-accumulate: tensorflow backend unavailable (x); trying native.'), ['tfjs-accumulate: tensorflow backend unavailable (x); trying native.']);
  });

  it("runs commands as a user's shell would: without npm run's variables, NODE_OPTIONS or this repo's bin folder", () => {
    const env = consumerEnv({
      PATH: ['/work/repo/node_modules/.bin', '/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin', '/usr/bin'].join(path.delimiter),
      npm_lifecycle_event: 'test:consumer',
      npm_command: 'run-script',
      npm_config_cache: '/root/.npm',
      npm_config_registry: 'https://registry.npmjs.org/',
      NODE_OPTIONS: '--import tsx',
      NODE_TEST_CONTEXT: 'child-v8',
      TFJS_ACCUMULATE_BACKEND: 'cpu',
      HOME: '/root',
    });
    assert.deepEqual(env, { PATH: '/usr/bin', npm_config_cache: '/root/.npm', npm_config_registry: 'https://registry.npmjs.org/', HOME: '/root' });
  });
});
