import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { killTagged, newKernelTag, taggedEnv } from '../../scripts/notebooks/processTree';

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
 * side by side), with its output kept; a command that cannot start rejects. Every process it
 * leaves behind (a kernel's, a `setsid` one a notebook started) is killed when it ends, found by
 * the tag the runner's kernels carry too (scripts/notebooks/processTree.ts).
 */
export function runCommand(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const tag = newKernelTag();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: taggedEnv(tag, options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', reject);
    child.on('close', (status) => {
      killTagged(tag);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Options of {@link nbconvertExecute}. */
export interface NbconvertExecuteArgs {
  notebook: string;
  /** Where the executed copy goes (the notebook's own name). */
  outDir: string;
  /** nbconvert's config file (scripts/notebooks/nbconvert_config.py, or Deno's with its barrier). */
  config: string;
  /** The kernelspec to run; default the one the notebook names. */
  kernel?: string;
  /** Seconds a cell may run. */
  cellTimeout: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * `jupyter nbconvert --execute --to notebook` under Debian's Python, without blocking the event
 * loop. On failure `error` is what the failing cell printed: the config prints "cell N ('first
 * line') failed:" and the cell's stderr; without that line, the output's last 15 lines.
 */
export async function nbconvertExecute(args: NbconvertExecuteArgs): Promise<{ status: number | null; outFile: string; error: string; output: string }> {
  const r = await runCommand(
    '/usr/bin/python3',
    [
      '-m',
      'nbconvert',
      '--execute',
      '--to',
      'notebook',
      `--config=${args.config}`,
      ...(args.kernel ? [`--ExecutePreprocessor.kernel_name=${args.kernel}`] : []),
      `--output-dir=${args.outDir}`,
      `--ExecutePreprocessor.timeout=${args.cellTimeout}`,
      args.notebook,
    ],
    { cwd: args.cwd, env: args.env },
  );
  const output = `${r.stdout}${r.stderr}`;
  const error = /^(cell \d+ .* failed:\n[\s\S]*?)(?=^Traceback|$(?![\s\S]))/m.exec(r.stderr)?.[1]?.trim() ?? output.trim().split('\n').slice(-15).join('\n');
  return { status: r.status, outFile: path.join(args.outDir, path.basename(args.notebook)), error, output };
}
