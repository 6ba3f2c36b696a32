import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

// native/build.js is plain JavaScript (it runs before, and without, the dev dependencies).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const build = require('../../native/build.js') as {
  build(args: { env?: Record<string, string | undefined>; verbose?: boolean; run?: (cmd: string, args: string[], opts: object) => { status: number | null; stdout?: string; stderr?: string; error?: Error } }): string | null;
  reasonOf(output: string): string;
  findNodeGyp(env: Record<string, string | undefined>): string | null;
  packing(env: Record<string, string | undefined>): boolean;
};
const SCRIPT = path.join(__dirname, '..', '..', 'native', 'build.js');

test('a failed build is named by its missing piece', () => {
  assert.match(build.reasonOf('/usr/bin/ld: cannot find -lopenblas: No such file or directory\ncollect2: error'), /no OpenBLAS .*apt-get install libopenblas-dev/);
  assert.match(build.reasonOf('gyp ERR! find Python Python is not set from command line'), /no Python 3/);
  assert.match(build.reasonOf('gyp ERR! stack Error: not found: make'), /no make/);
  assert.match(build.reasonOf("Error: Cannot find module 'node-addon-api'"), /node-addon-api headers/);
  assert.match(build.reasonOf('gyp http GET https://nodejs.org/...headers.tar.gz\ngyp ERR! stack Error: getaddrinfo EAI_AGAIN nodejs.org'), /no Node headers/);
  // Anything else: its first error line, not the boilerplate node-gyp prints on every failure.
  assert.equal(build.reasonOf('gyp info ok\nblas.cc:3: error: expected ;\ngyp ERR! cwd /x'), 'blas.cc:3: error: expected ;');
});

test('a failing node-gyp is a reason, not an exception; TFJS_ACCUMULATE_NATIVE=0 skips without trying', () => {
  let ran = 0;
  const failing = () => {
    ran++;
    return { status: 1, stdout: '', stderr: '/usr/bin/ld: cannot find -lopenblas' };
  };
  assert.match(build.build({ env: { npm_config_node_gyp: SCRIPT }, run: failing }) ?? '', /no OpenBLAS/);
  assert.equal(ran, 1);
  assert.equal(build.build({ env: { TFJS_ACCUMULATE_NATIVE: '0' }, run: failing }), 'TFJS_ACCUMULATE_NATIVE=0 asked to skip them');
  assert.equal(ran, 1, 'not run when skipped');
  const unrunnable = () => ({ status: null, error: new Error('spawn ENOENT') });
  assert.equal(build.build({ env: { npm_config_node_gyp: SCRIPT }, run: unrunnable }), 'node-gyp could not run: spawn ENOENT');
});

test('the build exits 0 with one line when it is skipped; --strict exits 1', () => {
  const env = { ...process.env, TFJS_ACCUMULATE_NATIVE: '0' };
  const install = spawnSync(process.execPath, [SCRIPT], { env, encoding: 'utf8' });
  assert.equal(install.status, 0, 'npm install must go on');
  assert.equal(install.stdout, '');
  assert.equal(install.stderr.trim().split('\n').length, 1, 'one line');
  assert.match(install.stderr, /^tfjs-accumulate: native kernels skipped: TFJS_ACCUMULATE_NATIVE=0 asked to skip them\. The library runs on its wasm\/cpu kernels/);
  const strict = spawnSync(process.execPath, [SCRIPT, '--strict'], { env, encoding: 'utf8' });
  assert.equal(strict.status, 1);
});

test('node-gyp is found: npm\'s own first', () => {
  assert.equal(build.findNodeGyp({ npm_config_node_gyp: SCRIPT }), SCRIPT);
  const found = build.findNodeGyp({ npm_config_node_gyp: '/nonexistent/node-gyp.js' });
  assert.notEqual(found, '/nonexistent/node-gyp.js');
});

test('npm pack and npm publish run prepare too: the build is skipped there in silence, and only there', () => {
  assert.equal(build.packing({ npm_lifecycle_event: 'prepare', npm_command: 'pack' }), true);
  assert.equal(build.packing({ npm_lifecycle_event: 'prepare', npm_command: 'publish' }), true);
  // npm ci / npm install of this repo run prepare as the install's; a user runs the bin.
  assert.equal(build.packing({ npm_lifecycle_event: 'prepare', npm_command: 'ci' }), false);
  assert.equal(build.packing({ npm_lifecycle_event: 'prepare', npm_command: 'install' }), false);
  assert.equal(build.packing({}), false);
  const env = { ...process.env, npm_lifecycle_event: 'prepare', npm_command: 'pack', TFJS_ACCUMULATE_NATIVE: '0' };
  const packing = spawnSync(process.execPath, [SCRIPT, '--strict'], { env, encoding: 'utf8' });
  assert.deepEqual([packing.status, packing.stdout, packing.stderr], [0, '', '']);
});
