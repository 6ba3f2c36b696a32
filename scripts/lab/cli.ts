/**
 * `npm run lab`: the tutorial in JupyterLab with the tslab kernel, in one command.
 *
 *   npm run lab [-- --app] [-- --port=N] [-- --allow-root]
 *
 * Builds the library when dist/ is missing, writes the tslab and Deno kernelspecs into
 * build/lab/jupyter (seen only by this server, through JUPYTER_PATH), and starts JupyterLab on
 * 127.0.0.1 with a token: `jupyter lab` where one is installed, else the app of lab/ (installed
 * and built on first use, then only when its sources change) on Debian's jupyterlab-server.
 * `--app` takes lab/'s app even where `jupyter lab` exists. Prints the URL with the token on this
 * process's standard output, the only place it is shown; the server reads the token from a private
 * file (tokenConfig.ts). As root it refuses to start unless given `--allow-root`. Ctrl-C stops it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { denoBinary, installKernel } from '../installKernel';
import { ensureLabApp } from './app';
import { hasJupyterLab, isRoot, refuseRoot, startLabServer, type LabFrontEnd } from './server';

const ROOT = path.resolve(__dirname, '..', '..');
const STATE = path.join(ROOT, 'build', 'lab');
const FIRST_NOTEBOOK = 'notebooks/01-environment.ipynb';

/** The command line of `npm run lab`. */
export interface LabCliArgs {
  /** Use lab/'s app even where `jupyter lab` is installed. Default false. */
  app: boolean;
  /** The server's port. Default: a free one. */
  port?: number;
  /** Start the server although this process is root (kernels then run code as root). Default false. */
  allowRoot: boolean;
}

/** Parses the arguments; throws naming the accepted ones. */
export function parseLabArgs(argv: readonly string[]): LabCliArgs {
  const args: LabCliArgs = { app: false, allowRoot: false };
  for (const arg of argv) {
    const port = /^--port=(\d+)$/.exec(arg);
    if (arg === '--app') args.app = true;
    else if (arg === '--allow-root') args.allowRoot = true;
    else if (port && Number(port[1]) > 0 && Number(port[1]) < 65536) args.port = Number(port[1]);
    else throw new Error(`lab: unknown argument ${JSON.stringify(arg)}; accepted: --app, --port=N (1-65535), --allow-root.`);
  }
  return args;
}

/** JUPYTER_PATH with this clone's kernelspecs first, so the notebooks' `tslab` is this clone's. */
export function labEnv(prefix: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const own = path.join(prefix, 'share', 'jupyter');
  return { ...env, JUPYTER_PATH: [own, ...(env.JUPYTER_PATH ? [env.JUPYTER_PATH] : [])].join(path.delimiter) };
}

async function main(): Promise<void> {
  const args = parseLabArgs(process.argv.slice(2));
  // Before any work: refused as root unless asked for (startLabServer says why).
  refuseRoot(args.allowRoot);
  if (!fs.existsSync(path.join(ROOT, 'dist', 'tutorial', 'index.js'))) {
    console.log('lab: building the library (npm run build) ...');
    const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('lab: npm run build failed');
  }
  const prefix = path.join(STATE, 'jupyter');
  installKernel({ prefix });
  if (denoBinary()) installKernel({ prefix, kernel: 'deno' });
  const env = labEnv(prefix);
  const frontEnd: LabFrontEnd = !args.app && hasJupyterLab(env) ? 'jupyter-lab' : 'lab-app';
  if (frontEnd === 'lab-app') {
    console.log('lab: no `jupyter lab` here; using the JupyterLab of lab/ (first run: npm ci and a webpack build, 2-3 minutes) ...');
    ensureLabApp();
  }
  const server = await startLabServer({
    root: ROOT,
    frontEnd,
    env,
    port: args.port,
    allowRoot: args.allowRoot,
    settingsDir: path.join(STATE, 'settings'),
    workspacesDir: path.join(STATE, 'workspaces'),
    onLog: (chunk) => process.stderr.write(chunk),
  });
  const open = `${server.base}/lab/tree/${FIRST_NOTEBOOK}?token=${server.token}`;
  const root = args.allowRoot && isRoot() ? '\nRunning as root (--allow-root): the kernels run the notebooks\' code as root.\n' : '';
  // The one place the token is shown: this terminal. The server's own log masks it.
  console.log(`\nJupyterLab (${frontEnd === 'jupyter-lab' ? '`jupyter lab`' : 'lab/ on jupyterlab-server'}) with the tslab kernel:\n\n    ${open}\n${root}\nCtrl-C stops it.`);
  const stop = (): void => void server.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  server.process.on('exit', (code) => process.exit(code ?? 0));
  // However this process ends, the server does not outlive it.
  process.on('exit', () => server.process.kill('SIGTERM'));
}

if (require.main === module) {
  main().catch((e: Error) => {
    console.error(e.message);
    process.exit(1);
  });
}
