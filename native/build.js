#!/usr/bin/env node
/**
 * Builds the optional native kernels (native/binding.gyp -> native/build/Release/
 * tfjs_accumulate_blas.node) with node-gyp. Nothing runs it when the package is installed as a
 * dependency: it has no install script (see docs/packaging.md, "The native addon"). It runs:
 *
 *     npx --no-install tfjs-accumulate-build-native   # a user, after `npm install node-addon-api`
 *     npm ci / npm install (this repo)                # the repo's `prepare` script: never fails
 *     npm run native:build                            # this repo, strictly (CI)
 *
 *     node native/build.js            # never fails: one line saying why it was skipped
 *     node native/build.js --strict   # exit 1 when the addon cannot be built
 *     node native/build.js --verbose  # show node-gyp's output even on success
 *
 * Optional for real: without a C++ compiler, Python, node-gyp, node-addon-api, the Node headers
 * or a CBLAS, the build fails, this script prints one line saying why it was skipped and how to
 * get it, and exits 0 (1 with --strict), and the library runs on its wasm/cpu kernels.
 * `TFJS_ACCUMULATE_NATIVE=0` skips the build without trying. npm runs `prepare` before
 * `npm pack` and `npm publish` too, where a build is no use: it is skipped there. Plain
 * JavaScript on purpose: it runs before (and without) the package's dev dependencies.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const HERE = __dirname;
const ADDON = path.join(HERE, 'build', 'Release', 'tfjs_accumulate_blas.node');
const PREFIX = 'tfjs-accumulate: native kernels';

/** The node-gyp entry point: npm's own (npm sets npm_config_node_gyp), else a resolvable one. */
function findNodeGyp(env) {
  const candidates = [
    env.npm_config_node_gyp,
    (() => {
      try {
        return require.resolve('node-gyp/bin/node-gyp.js');
      } catch {
        return undefined;
      }
    })(),
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((c) => typeof c === 'string' && c !== '' && fs.existsSync(c)) ?? null;
}

/**
 * The Node headers installed beside this Node (a distribution's nodejs package puts them in
 * <prefix>/include/node), so that node-gyp does not try to download them: offline machines
 * have them or nothing.
 */
function localHeaders() {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'common.gypi')) ? prefix : null;
}

/**
 * One line saying why a build failed, from node-gyp's output: the missing piece when it is a
 * known one (the BLAS, the compiler, Python, make, the headers), else the first error line.
 */
function reasonOf(output) {
  const known = [
    [/cannot find -lopenblas|library not found for -lopenblas|undefined reference to `cblas_sgemm'/, 'no OpenBLAS to link against (Debian/Ubuntu: apt-get install libopenblas-dev)'],
    [/gyp ERR! find Python|Could not find any Python/, 'node-gyp found no Python 3'],
    [/not found: make|make: not found|`make` failed|No Xcode or CLT/, 'no make / build tools (Debian/Ubuntu: apt-get install build-essential; macOS: xcode-select --install)'],
    [/(g\+\+|c\+\+|cc|clang\+\+): (not found|command not found)|No such file or directory.*(g\+\+|c\+\+)/, 'no C++ compiler (Debian/Ubuntu: apt-get install build-essential)'],
    [/Cannot find module 'node-addon-api'/, 'the node-addon-api headers are not installed'],
    [/node_api\.h: No such file|common\.gypi|find the node headers|unable to download|ENOTFOUND|EAI_AGAIN/, 'no Node headers (set npm_config_nodedir to a Node source/header tree, e.g. /usr)'],
  ];
  for (const [pattern, reason] of known) if (pattern.test(output)) return reason;
  const line = output.split('\n').find((l) => /error|ERR!/i.test(l) && !/gyp ERR! (cwd|node -v|node-gyp -v|System|command|not ok|stack)/.test(l));
  return (line ?? output.trim().split('\n').pop() ?? 'node-gyp failed').trim().slice(0, 300);
}

/** True when npm runs this as the `prepare` script of `npm pack` or `npm publish`. */
function packing(env) {
  return env.npm_lifecycle_event === 'prepare' && (env.npm_command === 'pack' || env.npm_command === 'publish');
}

/**
 * Builds the addon and loads it once in this process (so a build that links but cannot load,
 * e.g. a BLAS missing at run time, counts as a failure). Returns null on success, else a reason.
 */
function build({ env = process.env, verbose = false, run = spawnSync } = {}) {
  if (env.TFJS_ACCUMULATE_NATIVE === '0') return 'TFJS_ACCUMULATE_NATIVE=0 asked to skip them';
  const nodeGyp = findNodeGyp(env);
  if (nodeGyp === null) return 'node-gyp was not found (it comes with npm)';
  const args = [nodeGyp, 'rebuild', `--directory=${HERE}`];
  const nodedir = env.npm_config_nodedir || localHeaders();
  if (nodedir) args.push(`--nodedir=${nodedir}`);
  // The Python node-gyp runs gyp with: npm's setting, else the system's (a version manager's
  // shim on PATH may point at an interpreter that is not installed).
  const python = env.npm_config_python || env.PYTHON || (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : null);
  if (python) args.push(`--python=${python}`);
  const result = run(process.execPath, args, { cwd: HERE, env, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe' });
  if (result.error) return `node-gyp could not run: ${result.error.message}`;
  if (result.status !== 0) return verbose ? `node-gyp failed (its output is above)` : reasonOf(`${result.stdout ?? ''}\n${result.stderr ?? ''}`);
  try {
    const addon = require(ADDON);
    const c = new Float32Array(1);
    addon.sgemm(false, false, 1, 1, 1, new Float32Array([2]), 1, 0, new Float32Array([3]), 1, 0, c, 1, 0, 1, 0);
    if (c[0] !== 6) return `the built addon computed 2 x 3 = ${c[0]}`;
  } catch (e) {
    return `the built addon does not load: ${String(e && e.message ? e.message : e).split('\n')[0]}`;
  }
  return null;
}

function main(argv) {
  const strict = argv.includes('--strict');
  // Packing builds nothing and says nothing: the tarball holds the sources, not the addon.
  if (packing(process.env)) return 0;
  const reason = build({ verbose: argv.includes('--verbose') });
  if (reason === null) {
    console.log(`${PREFIX} built (${path.relative(process.cwd(), ADDON) || ADDON}).`);
    return 0;
  }
  // One line, on stderr, whatever failed: the install itself goes on.
  console.warn(`${PREFIX} skipped: ${reason}. The library runs on its wasm/cpu kernels; see docs/backends.md ("The native path").`);
  return strict ? 1 : 0;
}

module.exports = { build, reasonOf, findNodeGyp, packing, ADDON };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
