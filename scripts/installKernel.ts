/**
 * Installs a Jupyter kernelspec for Debian's /usr/bin/python3 Jupyter, so that JupyterLab,
 * classic Notebook and `jupyter nbconvert --execute` run notebooks with this repository's own
 * kernel: "tslab" (shown as "TypeScript"; tslab pinned in package.json, run by the Node that runs
 * this script), or with `--deno` "deno" (shown as "Deno"; the `deno` binary that npm installed
 * from the `deno` devDependency). See docs/deno.md for how the notebooks find either.
 *
 *   npm run kernel:install [-- --deno] [-- --user | --prefix=DIR]
 *
 * It also installs and enables, in the same place, the classic Notebook's figure renderer
 * (scripts/classic/nbextension.ts), where the Python has classic Notebook 6.
 *
 * Default location: the system-wide kernels folder as root, the per-user one otherwise. Running
 * it again rewrites the same kernel.json, so it is idempotent. After moving the repository or
 * changing Node, run it again: the kernelspec holds both absolute paths.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { installNbextension } from './classic/nbextension';
import { TSLAB_BIND_GUARD } from './jupyter/portSafe';

/** The installer's options. */
export interface InstallKernelArgs {
  /** Python whose Jupyter gets the kernel. Default `/usr/bin/python3` (Debian's). */
  python?: string;
  /** Install under DIR/share/jupyter/kernels (as for JUPYTER_PATH=DIR/share/jupyter). Default: none. */
  prefix?: string;
  /** Install into the per-user kernels folder. Default: true unless root. */
  user?: boolean;
  /** Which kernel: `"tslab"` or `"deno"`. Default `"tslab"`. */
  kernel?: KernelName;
}

/** The kernels this script installs, by kernelspec name. */
export type KernelName = 'tslab' | 'deno';

const ROOT = path.resolve(__dirname, '..');
const CONFIG = {
  python: '/usr/bin/python3',
  tslab: path.join(ROOT, 'node_modules', '.bin', 'tslab'),
  denoProxy: path.join(ROOT, 'scripts', 'deno', 'kernel_proxy.py'),
  displayNames: { tslab: 'TypeScript', deno: 'Deno' } as Record<KernelName, string>,
};

/**
 * The `deno` executable that `npm ci` installed: the copy `deno`'s postinstall puts beside its
 * package, else the platform package's own binary (`@deno/linux-x64-glibc`, ...) when install
 * scripts did not run. Not `node_modules/.bin/deno`: without the postinstall that is a Node shim,
 * and a kernel started through it would be one process more to interrupt and stop.
 */
export function denoBinary(root: string = ROOT): string | undefined {
  const exe = process.platform === 'win32' ? 'deno.exe' : 'deno';
  const scoped = path.join(root, 'node_modules', '@deno');
  const platforms = fs.existsSync(scoped) ? fs.readdirSync(scoped).map((p) => path.join(scoped, p, exe)) : [];
  return [path.join(root, 'node_modules', 'deno', exe), ...platforms].find((f) => fs.existsSync(f));
}

/**
 * The kernelspec (`{connection_file}` is filled by Jupyter): this repo's tslab started by this
 * Node, or this repo's deno behind the proxy of scripts/deno/kernel_proxy.py run by `python`. Both say `language: "typescript"`, which is what lets a front end
 * that knows only one of the two kernels open the notebooks (docs/deno.md).
 */
export function kernelJson(kernel: KernelName = 'tslab', python: string = CONFIG.python): Record<string, unknown> {
  const common = { display_name: CONFIG.displayNames[kernel], language: 'typescript', metadata: { installedBy: 'tfjs-accumulate scripts/installKernel.ts' } };
  // The guard makes tslab exit when a port of its connection file was taken, where it would hang
  // (scripts/jupyter/tslabBindGuard.cjs); the server then restarts it on new ports.
  if (kernel === 'tslab') return { argv: [process.execPath, '--require', TSLAB_BIND_GUARD, CONFIG.tslab, 'kernel', '--config-path', '{connection_file}'], ...common };
  const deno = denoBinary();
  if (!deno) throw new Error(`installKernel: no deno binary under ${path.join(ROOT, 'node_modules')}; run \`npm ci\` first (deno is a devDependency).`);
  // The kernel finds the repository's deno.json (detect-cjs for dist/) by walking up from the
  // notebook's folder, where Jupyter starts it. No update check: CI and readers may be offline.
  // Deno runs behind scripts/deno/kernel_proxy.py, which keeps each cell's late output in the
  // cell (docs/deno.md); the proxy needs the pyzmq and jupyter_client of the Jupyter installing it.
  return { argv: [python, CONFIG.denoProxy, deno, '{connection_file}'], env: { DENO_NO_UPDATE_CHECK: '1' }, ...common };
}

/**
 * The kernelspec every notebook names. `tslab` starts by name where it is installed; a front end
 * with only the Deno kernel falls back to the one kernel of the same language (docs/deno.md), so
 * the language must be the one both kernelspecs above declare.
 */
export const NOTEBOOK_KERNELSPEC = { name: 'tslab', display_name: 'TypeScript', language: 'typescript' } as const;

/** What is wrong with a notebook's `metadata.kernelspec`, or null when it is NOTEBOOK_KERNELSPEC. */
export function kernelspecProblem(metadata: { kernelspec?: Record<string, unknown> } | undefined): string | null {
  const spec = metadata?.kernelspec;
  if (!spec) return 'no metadata.kernelspec';
  const wrong = (Object.keys(NOTEBOOK_KERNELSPEC) as (keyof typeof NOTEBOOK_KERNELSPEC)[]).filter((k) => spec[k] !== NOTEBOOK_KERNELSPEC[k]);
  return wrong.length === 0 ? null : wrong.map((k) => `kernelspec.${k} is ${JSON.stringify(spec[k])}, expected ${JSON.stringify(NOTEBOOK_KERNELSPEC[k])}`).join('; ');
}

/** Installs the kernelspec and returns the folder it went to. Throws with what to do on failure. */
export function installKernel(args: InstallKernelArgs = {}): string {
  const python = args.python ?? CONFIG.python;
  const kernel = args.kernel ?? 'tslab';
  if (kernel !== 'tslab' && kernel !== 'deno') throw new Error(`installKernel: kernel must be "tslab" or "deno"; got ${JSON.stringify(kernel)}.`);
  if (kernel === 'tslab' && !fs.existsSync(CONFIG.tslab)) throw new Error(`installKernel: ${CONFIG.tslab} is missing; run \`npm ci\` first.`);
  const spec = kernelJson(kernel, python);
  const probe = spawnSync(python, ['-c', 'import jupyter_client'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(`installKernel: ${python} has no jupyter_client; run \`sudo scripts/systemDeps.sh\` (Debian packages python3-jupyter-client, jupyter-nbconvert, ...).`);
  }
  const source = fs.mkdtempSync(path.join(os.tmpdir(), `${kernel}-kernelspec-`));
  try {
    fs.writeFileSync(path.join(source, 'kernel.json'), JSON.stringify(spec, null, 2) + '\n');
    const user = args.user ?? (args.prefix === undefined && process.getuid?.() !== 0);
    const where = args.prefix !== undefined ? [`--prefix=${path.resolve(args.prefix)}`] : user ? ['--user'] : [];
    const r = spawnSync(python, ['-m', 'jupyter_client.kernelspecapp', 'install', source, `--name=${kernel}`, ...where], {
      encoding: 'utf8',
      // Debian's Python 3.11 prints a debugger warning about frozen modules on every start.
      env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: '1' },
    });
    const installed = /Installed kernelspec \S+ in (.+)/.exec(r.stdout + r.stderr)?.[1]?.trim();
    if (r.status !== 0 || !installed) throw new Error(`installKernel: jupyter kernelspec install failed:\n${r.stdout}${r.stderr}`);
    return installed;
  } finally {
    fs.rmSync(source, { recursive: true, force: true });
  }
}

function main(): void {
  const args: InstallKernelArgs = {};
  for (const arg of process.argv.slice(2)) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--user') args.user = true;
    else if (flag === '--deno' && value === undefined) args.kernel = 'deno';
    else if (flag === '--prefix' && value) args.prefix = value;
    else if (flag === '--python' && value) args.python = value;
    else {
      console.error(`installKernel: unknown argument ${arg}; accepted: --deno, --user, --prefix=DIR, --python=PATH.`);
      process.exit(2);
    }
  }
  try {
    const kernel = args.kernel ?? 'tslab';
    const dir = installKernel(args);
    console.log(`Installed the "${kernel}" kernel (${CONFIG.displayNames[kernel]}) in ${dir}`);
    console.log(`  runs: ${(kernelJson(kernel).argv as string[]).join(' ')}`);
    const figures = installNbextension(args);
    if (figures) console.log(`Installed classic Notebook's figure renderer in ${figures.dir}, enabled in ${figures.config}`);
    else console.log(`No classic Notebook 6 in ${args.python ?? CONFIG.python}: its figure renderer was not installed.`);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}

if (require.main === module) main();
