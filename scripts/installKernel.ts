/**
 * Installs the Jupyter kernelspec "tslab" (TypeScript) for Debian's /usr/bin/python3 Jupyter, so
 * that JupyterLab, classic Notebook and `jupyter nbconvert --execute` run notebooks with this
 * repository's tslab (pinned in package.json) under the Node that runs this script.
 *
 *   npm run kernel:install [-- --user | --prefix=DIR]
 *
 * Default location: the system-wide kernels folder as root, the per-user one otherwise. Running
 * it again rewrites the same kernel.json, so it is idempotent. After moving the repository or
 * changing Node, run it again: the kernelspec holds both absolute paths.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The installer's options. */
export interface InstallKernelArgs {
  /** Python whose Jupyter gets the kernel. Default `/usr/bin/python3` (Debian's). */
  python?: string;
  /** Install under DIR/share/jupyter/kernels (as for JUPYTER_PATH=DIR/share/jupyter). Default: none. */
  prefix?: string;
  /** Install into the per-user kernels folder. Default: true unless root. */
  user?: boolean;
}

const ROOT = path.resolve(__dirname, '..');
const CONFIG = {
  python: '/usr/bin/python3',
  kernelName: 'tslab',
  displayName: 'TypeScript',
  tslab: path.join(ROOT, 'node_modules', '.bin', 'tslab'),
};

/** The kernelspec: this repo's tslab, started by this Node (`{connection_file}` is filled by Jupyter). */
export function kernelJson(): Record<string, unknown> {
  return {
    argv: [process.execPath, CONFIG.tslab, 'kernel', '--config-path', '{connection_file}'],
    display_name: CONFIG.displayName,
    language: 'typescript',
    metadata: { installedBy: 'tfjs-accumulate scripts/installKernel.ts' },
  };
}

/** Installs the kernelspec and returns the folder it went to. Throws with what to do on failure. */
export function installKernel(args: InstallKernelArgs = {}): string {
  const python = args.python ?? CONFIG.python;
  if (!fs.existsSync(CONFIG.tslab)) throw new Error(`installKernel: ${CONFIG.tslab} is missing; run \`npm ci\` first.`);
  const probe = spawnSync(python, ['-c', 'import jupyter_client'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(`installKernel: ${python} has no jupyter_client; run \`sudo scripts/systemDeps.sh\` (Debian packages python3-jupyter-client, jupyter-nbconvert, ...).`);
  }
  const source = fs.mkdtempSync(path.join(os.tmpdir(), 'tslab-kernelspec-'));
  try {
    fs.writeFileSync(path.join(source, 'kernel.json'), JSON.stringify(kernelJson(), null, 2) + '\n');
    const user = args.user ?? (args.prefix === undefined && process.getuid?.() !== 0);
    const where = args.prefix !== undefined ? [`--prefix=${path.resolve(args.prefix)}`] : user ? ['--user'] : [];
    const r = spawnSync(python, ['-m', 'jupyter_client.kernelspecapp', 'install', source, `--name=${CONFIG.kernelName}`, ...where], {
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
    else if (flag === '--prefix' && value) args.prefix = value;
    else if (flag === '--python' && value) args.python = value;
    else {
      console.error(`installKernel: unknown argument ${arg}; accepted: --user, --prefix=DIR, --python=PATH.`);
      process.exit(2);
    }
  }
  try {
    const dir = installKernel(args);
    console.log(`Installed the "${CONFIG.kernelName}" kernel (${CONFIG.displayName}) in ${dir}`);
    console.log(`  runs: ${(kernelJson().argv as string[]).join(' ')}`);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}

if (require.main === module) main();
