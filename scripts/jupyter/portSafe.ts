/**
 * How the project's Jupyter servers start kernels that survive a port clash: the command-line
 * options and environment that load scripts/jupyter/port_safe.py, and the tslab preload of
 * tslabBindGuard.cjs. Together: a kernel whose port was taken exits (tslab) or fails (Deno's
 * proxy) at once, and the server's restarter starts it again on new ports.
 */
import * as path from 'node:path';

const HERE = path.resolve(__dirname);

/** The preload that makes tslab exit when a port of its connection file is taken. */
export const TSLAB_BIND_GUARD = path.join(HERE, 'tslabBindGuard.cjs');

/** Which server: jupyter_server (JupyterLab and the lab app) or classic Notebook 6. */
export type JupyterServerKind = 'jupyter-server' | 'classic';

/** The server options that make it use port_safe.py's kernel manager. */
export function portSafeArgs(kind: JupyterServerKind): string[] {
  return kind === 'classic'
    ? ['--MappingKernelManager.kernel_manager_class=port_safe.PortSafeKernelManager']
    : ['--AsyncMappingKernelManager.kernel_manager_class=port_safe.PortSafeAsyncKernelManager'];
}

/** `env` with this folder first on PYTHONPATH, so that the server imports port_safe. */
export function portSafeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest = env.PYTHONPATH ? [env.PYTHONPATH] : [];
  return { ...env, PYTHONPATH: [HERE, ...rest].join(path.delimiter) };
}
