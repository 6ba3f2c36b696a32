/**
 * Starts a JupyterLab server on 127.0.0.1 with a token: `jupyter lab` where one is installed, else
 * the lab app of lab/ on Debian's jupyterlab-server (lab/server.py). Used by `npm run lab` and by
 * the JupyterLab end-to-end test. The token reaches the server through a private config file
 * (tokenConfig.ts), never its command line or environment, which other local users can read.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import * as path from 'node:path';
import { killTagged, newKernelTag, taggedEnv } from '../notebooks/processTree';
import { writeTokenConfig } from './tokenConfig';
import { portSafeArgs, portSafeEnv } from '../jupyter/portSafe';

const ROOT = path.resolve(__dirname, '..', '..');
/** Debian's Python, which has jupyterlab-server (scripts/systemDeps.sh). */
const PYTHON = '/usr/bin/python3';

/** Which server: a JupyterLab installed with pip/conda (`jupyter lab`), or lab/'s app. */
export type LabFrontEnd = 'jupyter-lab' | 'lab-app';

/** Options of {@link startLabServer}. */
export interface StartLabArgs {
  /** The folder the server shows and opens notebooks from. Required. */
  root: string;
  /** Which server. Default: `jupyter-lab` when {@link hasJupyterLab}, else `lab-app`. */
  frontEnd?: LabFrontEnd;
  /** The environment of the server and its kernels (JUPYTER_PATH finds the kernelspecs). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** TCP port. Default: a free one. */
  port?: number;
  /** The token in the URL. Default: 32 random hex digits. */
  token?: string;
  /** lab-app only: folders for the reader's settings and workspaces. Default: lab/build/. */
  settingsDir?: string;
  workspacesDir?: string;
  /** Called with each chunk of the server's log. Default: the log is only kept. */
  onLog?: (chunk: string) => void;
  /**
   * How long the server may take to listen (ms), a ceiling for a server that hangs, not a
   * measure of a slow start: the wait ends as soon as the server says it listens or exits.
   * Default 600 000.
   */
  startTimeoutMs?: number;
  /**
   * Run the server when this process is root. A kernel runs a notebook's code as the server's
   * user, and anyone on the machine can connect to a loopback port, so a root server is refused
   * unless asked for (`npm run lab -- --allow-root`), as Jupyter refuses it. Default false.
   */
  allowRoot?: boolean;
}

/** A server that would run as root without {@link StartLabArgs.allowRoot}. */
export class LabRootError extends Error {
  override name = 'LabRootError';
}

/** A running server. */
export interface LabServer {
  frontEnd: LabFrontEnd;
  /** `http://127.0.0.1:PORT`. */
  base: string;
  token: string;
  /** The URL to open, token included. */
  url: string;
  process: ChildProcess;
  /** Everything the server logged so far. */
  log(): string;
  /** Stops the server, its kernels and every process they started. */
  stop(): Promise<void>;
}

/** True when `jupyter lab` runs here (JupyterLab installed with pip or conda). */
export function hasJupyterLab(env: NodeJS.ProcessEnv = process.env): boolean {
  const r = spawnSync('jupyter', ['lab', '--version'], { env, encoding: 'utf8' });
  return !r.error && r.status === 0;
}

/** True when Debian's Python has jupyterlab-server, which lab/server.py needs. */
export function hasLabServer(): boolean {
  const r = spawnSync(PYTHON, ['-c', 'import jupyterlab_server'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** True when this process runs as root, where Jupyter needs `--allow-root`. */
export const isRoot = (): boolean => process.getuid?.() === 0;

/** Throws {@link LabRootError} when this process is root and running as root was not asked for. */
export function refuseRoot(allowRoot: boolean | undefined, root: boolean = isRoot()): void {
  if (root && !allowRoot) {
    throw new LabRootError("lab: this process is root, and a kernel would run every notebook's code as root for anyone who gets the token; run it as another user, or pass --allow-root (`npm run lab -- --allow-root`) to run it as root anyway.");
  }
}

/**
 * The command line of a server, without starting it. The token is not on it: `configFile` is the
 * private config file that holds it (tokenConfig.ts). `allowRoot` adds `--allow-root`.
 */
export function labCommand(frontEnd: LabFrontEnd, args: { root: string; port: number; configFile: string; allowRoot?: boolean; settingsDir?: string; workspacesDir?: string }): string[] {
  const common = ['--no-browser', '--ServerApp.ip=127.0.0.1', `--ServerApp.port=${args.port}`, '--ServerApp.port_retries=0', `--config=${args.configFile}`, `--ServerApp.root_dir=${args.root}`, ...portSafeArgs('jupyter-server')];
  if (args.allowRoot) common.push('--allow-root');
  if (frontEnd === 'jupyter-lab') return ['jupyter', 'lab', ...common];
  const dirs = [...(args.settingsDir ? [`--TutorialLab.user_settings_dir=${args.settingsDir}`] : []), ...(args.workspacesDir ? [`--TutorialLab.workspaces_dir=${args.workspacesDir}`] : [])];
  return [PYTHON, path.join(ROOT, 'lab', 'server.py'), ...common, ...dirs];
}

/** Starts the server and resolves once it listens; rejects with its log if it exits or hangs. */
export async function startLabServer(args: StartLabArgs): Promise<LabServer> {
  const frontEnd = args.frontEnd ?? (hasJupyterLab(args.env) ? 'jupyter-lab' : 'lab-app');
  refuseRoot(args.allowRoot);
  if (frontEnd === 'lab-app' && !hasLabServer()) {
    throw new Error(`lab: ${PYTHON} has no jupyterlab_server; run \`bash scripts/systemDeps.sh\` (Debian's python3-jupyterlab-server), or install JupyterLab.`);
  }
  const port = args.port ?? (await freePort());
  const token = args.token ?? randomBytes(16).toString('hex');
  const config = writeTokenConfig(token);
  const [command, ...argv] = labCommand(frontEnd, { root: args.root, port, configFile: config.file, allowRoot: args.allowRoot && isRoot(), settingsDir: args.settingsDir, workspacesDir: args.workspacesDir });
  // Every kernel the server starts, and whatever a notebook starts, carries this tag, so that
  // stop() finds them all, a `setsid` one included (scripts/notebooks/processTree.ts).
  const tag = newKernelTag();
  // Debian's Python 3.11 prints a debugger warning about frozen modules on every start.
  const child = spawn(command, argv, { env: taggedEnv(tag, { PYDEVD_DISABLE_FILE_VALIDATION: '1', ...portSafeEnv(args.env ?? process.env) }), stdio: ['ignore', 'pipe', 'pipe'] });
  const base = `http://127.0.0.1:${port}`;
  let log = '';
  let listening: () => void = () => undefined;
  const listens = new Promise<void>((resolve) => (listening = resolve));
  const onData = (b: Buffer): void => {
    log += b;
    args.onLog?.(b.toString());
    if (log.includes(`${base}/`)) listening();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The config file is read at start-up and not needed after; it goes when the server goes, and
  // so does every process the server's kernels left.
  void exited.then(() => {
    config.remove();
    killTagged(tag);
  });
  let ceiling: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    listens.then(() => 'listening' as const),
    exited.then(() => 'exited' as const),
    new Promise<'hung'>((resolve) => (ceiling = setTimeout(() => resolve('hung'), args.startTimeoutMs ?? 600_000))),
  ]);
  clearTimeout(ceiling);
  if (outcome !== 'listening') {
    child.kill('SIGTERM');
    config.remove();
    throw new Error(`lab: the ${frontEnd} server did not start (${outcome === 'exited' ? `exit ${child.exitCode ?? child.signalCode}` : `no answer within ${(args.startTimeoutMs ?? 600_000) / 1000} s`}):\n${log}`);
  }
  return {
    frontEnd,
    base,
    token,
    url: `${base}/lab?token=${token}`,
    process: child,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // SIGTERM: jupyter-server shuts its kernels down and exits without asking.
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      config.remove();
      killTagged(tag);
    },
  };
}
