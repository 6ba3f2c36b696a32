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
