import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeRun, folderSize, markdownPrograms, megabytes, REFUSED_TFJS, run, SUPPORTED_TFJS, unexpectedStderr, type Run } from '../helpers/consumer';
import { Slots } from '../../scripts/notebooks/slots';

// The package as a user gets it: `npm pack` (whose prepack builds a stale dist), then a fresh
// project per supported tfjs version that installs the tarball beside that tfjs and the wasm
// backend, runs README.md's programs as written, test/fixtures/consumer/fitCallback.mjs (model.fit
// with the callback) and test/fixtures/consumer/contract.ts compiled by tsc, and builds the native
// addon by hand where CI needs it; and a project on tfjs 3.x, which npm and the import refuse. npm reads its cache first (--prefer-offline) and asks
// the registry for what is missing (CI starts cold). `npm run test:consumer` runs it.
// TFJS_ACCUMULATE_CONSUMER_TARBALL=<file.tgz> tests that tarball instead (an older commit's).

const ROOT = path.resolve(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn'];
/** Guards against a hang only; nothing asserts a duration. */
const INSTALL_TIMEOUT = 900;
const PROGRAM_TIMEOUT = 300;
/**
 * The heap a program may use: several times what the programs need, so that one that loops
 * allocating (the callback's endless loop of issue 33, item 1) stops at V8's fatal heap-limit
 * error here rather than at 4.3 GB (98 s in the issue).
 */
const HEAP_MB = 512;
const given = process.env.TFJS_ACCUMULATE_CONSUMER_TARBALL;
const programs = markdownPrograms(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));

let tmp: string;
let tarball: string;
/** A supported version's project once installed, and whether the install compiled anything. */
interface Project {
  dir: string;
  install: Run;
  compiledByInstall: boolean;
}
/** Each supported version's project, installed side by side while the first tests run. */
const projects = new Map<string, Promise<Project>>();
const NEWEST = SUPPORTED_TFJS[SUPPORTED_TFJS.length - 1];
/** The native addon built by hand in the newest project (null where skipped), meanwhile too. */
let nativeBuild: Promise<{ addonApi: Run; built: Run | null } | null>;
/** The contract program, compiled once by tsc against the newest tfjs's project. */
let compiled: Promise<{ file: string; tsc: Run }>;
/** The refused version: the plain install, and one forced with --legacy-peer-deps. */
let refused: Promise<{ plain: Run; forced: Run; dir: string }>;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-accumulate-consumer-'));
  if (given) {
    tarball = path.resolve(given);
    console.log(`tarball: ${tarball} (TFJS_ACCUMULATE_CONSUMER_TARBALL)`);
  } else {
    const packed = await run(NPM, ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT, timeoutSeconds: INSTALL_TIMEOUT, env: process.env });
    assert.equal(packed.status, 0, describeRun(packed));
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; size: number; unpackedSize: number; entryCount: number }[];
    tarball = path.join(tmp, info.filename);
    console.log(`npm pack: ${info.filename}, ${megabytes(info.size)} packed, ${megabytes(info.unpackedSize)} unpacked, ${info.entryCount} files`);
  }
  // Two installs at a time, the first project's tests running meanwhile: on CI's two cores four
  // at once were slower than one after the other (each install writes some 8,000 files).
  const installs = new Slots(2);
  const install = (dir: string, args: string[]) => installs.run(1, () => npm(dir, ['install', ...args]));
  for (const version of SUPPORTED_TFJS) {
    const dir = project(`tfjs-${version}`);
    const installed = install(dir, [tarball, `@tensorflow/tfjs@${version}`, `@tensorflow/tfjs-backend-wasm@${version}`]);
    projects.set(version, installed.then((r) => ({ dir, install: r, compiledByInstall: fs.existsSync(path.join(dir, 'node_modules', 'tfjs-accumulate', 'native', 'build')) })));
  }
  const newest = projects.get(NEWEST) as Promise<Project>;
  // The addon is built as a user would, once installed: the newest project's contract then expects it.
  nativeBuild = nativeSkip(NEWEST)
    ? Promise.resolve(null)
    : newest.then(async ({ dir }) => {
        const addonApi = await install(dir, ['node-addon-api@8.9.2']);
        const built = addonApi.status === 0 ? await run('npx', ['--no-install', 'tfjs-accumulate-build-native', '--strict'], { cwd: dir, timeoutSeconds: INSTALL_TIMEOUT }) : null;
        return { addonApi, built };
      });
  compiled = newest.then(async ({ dir }) => {
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'consumer', 'contract.ts'), path.join(dir, 'contract.mts'));
    const tsconfig = { compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'ES2022', lib: ['ES2022', 'DOM'], types: ['node'], strict: true, skipLibCheck: true }, files: ['contract.mts'] };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    return { file: path.join(dir, 'contract.mjs'), tsc: await node(dir, [TSC, '-p', 'tsconfig.json']) };
  });
  const plainDir = project(`tfjs-${REFUSED_TFJS}`);
  const forcedDir = project(`tfjs-${REFUSED_TFJS}-forced`);
  refused = Promise.all([install(plainDir, [tarball, `@tensorflow/tfjs@${REFUSED_TFJS}`]), install(forcedDir, ['--legacy-peer-deps', tarball, `@tensorflow/tfjs@${REFUSED_TFJS}`])]).then(
    ([plain, forced]) => ({ plain, forced, dir: forcedDir }),
  );
});

after(async () => {
  // Let every command end before its folder goes.
  await Promise.allSettled([...projects.values(), compiled, refused, nativeBuild]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A fresh project: a package.json and nothing else. */
function project(name: string): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, version: '1.0.0', private: true }, null, 2));
  return dir;
}

function npm(dir: string, args: string[]): Promise<Run> {
  return run(NPM, [...args, ...NPM_FLAGS], { cwd: dir, timeoutSeconds: INSTALL_TIMEOUT });
}

function node(dir: string, args: string[]): Promise<Run> {
  return run(process.execPath, [`--max-old-space-size=${HEAP_MB}`, ...args], { cwd: dir, timeoutSeconds: PROGRAM_TIMEOUT });
}

/** Asserts a program ran to its end and wrote nothing to stderr but tfjs's own banner. */
function assertClean(r: Run): void {
  assert.equal(r.status, 0, describeRun(r));
  assert.deepEqual(unexpectedStderr(r.stderr), [], describeRun(r));
}

/** What each README program must print, beyond running cleanly. */
const EXPECTED: Record<string, (stdout: string) => void> = {
  'loop.mjs': (stdout) => {
    const losses = [...stdout.matchAll(/^update (\d+): loss (\d+\.\d{4})$/gm)];
    assert.deepEqual(losses.map((m) => Number(m[1])), [1, 2, 3, 4, 5], stdout);
    const values = losses.map((m) => Number(m[2]));
    assert.ok(values.every((v, i) => i === 0 || v < values[i - 1]), `the update's loss falls: ${values.join(', ')}`);
  },
  'fit.mjs': (stdout) => {
    assert.match(stdout, /^equivalent: true, largest relative difference \d\.\de-\d+$/m);
    assert.match(stdout, /^updates: 15, last epoch: loss \d+\.\d{4}, accuracy \d\.\d\d$/m);
    assert.match(stdout, /^restored: 4 micro-batches per update$/m);
  },
};

it('README.md holds the programs this test runs', () => {
  assert.deepEqual(programs.map((p) => p.file).sort(), Object.keys(EXPECTED).sort());
});

for (const version of SUPPORTED_TFJS) {
  describe(`a project on @tensorflow/tfjs ${version}`, () => {
    let dir: string;
    let install: Run;
    let compiledByInstall: boolean;

    before(async () => {
      ({ dir, install, compiledByInstall } = await (projects.get(version) as Promise<Project>));
      const size = folderSize(path.join(dir, 'node_modules'));
      console.log(`npm install of the tarball beside tfjs ${version} and its wasm backend: ${install.seconds.toFixed(1)} s, node_modules ${megabytes(size.diskBytes)} on disk (${size.files} files)`);
    });

    it('installs without running a script of the package, with one copy of tfjs', async () => {
      assert.equal(install.status, 0, describeRun(install));
      const output = install.stdout + install.stderr;
      assert.doesNotMatch(output, /tfjs-accumulate@[\d.]+ \(\w*install/, 'npm lists no install script of tfjs-accumulate');
      assert.equal(compiledByInstall, false, 'the install compiled the addon');
      const cores = await npm(dir, ['ls', '--all', '--parseable', '@tensorflow/tfjs-core']);
      const copies = cores.stdout.split('\n').filter((l) => l.endsWith(`${path.sep}@tensorflow${path.sep}tfjs-core`));
      assert.equal(copies.length, 1, `one @tensorflow/tfjs-core expected:\n${cores.stdout}`);
    });

    for (const program of programs) {
      it(`runs README.md's ${program.file} as written`, async () => {
        fs.writeFileSync(path.join(dir, program.file), program.code);
        const r = await node(dir, [program.file]);
        assertClean(r);
        EXPECTED[program.file]?.(r.stdout);
        console.log(`${program.file} (tfjs ${version}):\n${r.stdout.trim()}`);
      });
    }

    it('trains with model.fit and optimizer.callback() as with the big batches', async () => {
      fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'consumer', 'fitCallback.mjs'), path.join(dir, 'fitCallback.mjs'));
      const r = await node(dir, ['fitCallback.mjs']);
      assertClean(r);
      console.log(r.stdout.trim());
    });

    // Where the addon was built by hand (the newest project), selectBackend() must pick it; elsewhere wasm.
    const native = version === NEWEST && nativeSkip(version) === false;

    it(`runs the contract program, compiled by tsc against the installed types${native ? ', on the native addon built by hand' : ''}`, async () => {
      const { file, tsc } = await compiled;
      assert.equal(tsc.status, 0, describeRun(tsc));
      if (path.dirname(file) !== dir) fs.copyFileSync(file, path.join(dir, 'contract.mjs'));
      if (native) await nativeBuild;
      const r = await node(dir, ['contract.mjs', version, native ? 'native' : 'wasm']);
      assertClean(r);
      console.log(r.stdout.trim());
    });

    it('builds the native addon on request: npm install node-addon-api, npx --no-install tfjs-accumulate-build-native', { skip: native ? false : nativeSkip(version) }, async () => {
      const { addonApi, built } = (await nativeBuild) as { addonApi: Run; built: Run | null };
      assert.equal(addonApi.status, 0, describeRun(addonApi));
      assert.ok(built);
      assert.equal(built.status, 0, describeRun(built));
      assert.match(built.stdout, /^tfjs-accumulate: native kernels built/m);
    });
  });
}

/**
 * The native build needs a compiler and OpenBLAS: on CI (`npm test` sets
 * TFJS_ACCUMULATE_REQUIRE_NATIVE=1 for the unit tests, and builds the addon) and wherever this
 * repo's own addon is built. Once, beside the newest tfjs: a compile takes a while.
 */
function nativeSkip(version: string): string | false {
  if (version !== NEWEST) return 'built once, beside the newest tfjs';
  const built = fs.existsSync(path.join(ROOT, 'native', 'build', 'Release', 'tfjs_accumulate_blas.node'));
  return built || process.env.TFJS_ACCUMULATE_REQUIRE_NATIVE === '1' ? false : "this repo's addon is not built here (npm run native:build says why)";
}

describe(`a project on @tensorflow/tfjs ${REFUSED_TFJS}`, () => {
  it('is refused by npm (ERESOLVE), and forced, by the import (UnsupportedTfjsVersionError)', async () => {
    const { plain, forced, dir } = await refused;
    assert.notEqual(plain.status, 0, describeRun(plain));
    assert.match(plain.stderr, /ERESOLVE/, describeRun(plain));
    assert.match(plain.stderr, /peer @tensorflow\/tfjs@"\^4\.0\.0" from tfjs-accumulate/, describeRun(plain));
    assert.equal(forced.status, 0, describeRun(forced));
    const r = await node(dir, ['--input-type=module', '-e', "await import('tfjs-accumulate')"]);
    assert.notEqual(r.status, 0, describeRun(r));
    assert.match(r.stderr, /UnsupportedTfjsVersionError: tfjs-accumulate needs @tensorflow\/tfjs \^4\.0\.0 \(a 4\.x; 4\.0\.0 and 4\.22\.0 are tested\); this program loaded @tensorflow\/tfjs-core 3\.21\.0/, describeRun(r));
  });
});
