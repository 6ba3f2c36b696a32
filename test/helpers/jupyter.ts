import { spawn } from 'node:child_process';
import * as path from 'node:path';

/**
 * The environment of a Jupyter run that sees only the kernelspecs a test installs under
 * `tmp/prefix` and keeps no state in the user's Jupyter folders.
 */
export function isolatedJupyterEnv(tmp: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    JUPYTER_PATH: path.join(tmp, 'prefix', 'share', 'jupyter'),
    JUPYTER_DATA_DIR: path.join(tmp, 'data'),
    JUPYTER_CONFIG_DIR: path.join(tmp, 'config'),
    JUPYTER_RUNTIME_DIR: path.join(tmp, 'runtime'),
    PYDEVD_DISABLE_FILE_VALIDATION: '1',
  };
}

/**
 * Runs a command to its end without blocking the event loop (so that two nbconvert runs can go
 * side by side), with its output kept; a command that cannot start rejects.
 */
export function runCommand(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
