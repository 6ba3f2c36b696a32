/**
 * How a Jupyter server gets its token without anyone else on the machine seeing it.
 *
 * A process's command line (`/proc/PID/cmdline`) is readable by every local user, so a token
 * passed as `--ServerApp.token=…` is handed to all of them, and with it the kernels: code runs as
 * the server's user. Instead the token goes into a Jupyter config file of mode 0600 in a folder of
 * mode 0700 that only this user can enter, and the server is told the file's path
 * (`--config=PATH`, which Jupyter loads even where lab/server.py turns the reader's own config
 * folders off). The environment is no place for it either: `JUPYTER_TOKEN` would be inherited by
 * every kernel and every process a notebook starts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The Jupyter application whose token a config sets: jupyter-server's, or classic Notebook 6's. */
export type TokenApp = 'ServerApp' | 'NotebookApp';

/** A private config file that holds a token; {@link TokenConfig.remove} deletes it and its folder. */
export interface TokenConfig {
  /** The config file, mode 0600, for `--config=PATH`. */
  file: string;
  /** Its folder, mode 0700. */
  dir: string;
  remove(): void;
}

/** A bad token: only letters, digits, `-` and `_` go into the generated Python. */
export class TokenConfigError extends Error {
  override name = 'TokenConfigError';
}

/** The config file's text: the token as a Python string literal, for the given application. */
export function tokenConfigText(token: string, app: TokenApp): string {
  if (!/^[A-Za-z0-9_-]{16,}$/.test(token)) {
    throw new TokenConfigError(`tokenConfig: a token must be at least 16 letters, digits, - or _; got ${token.length} characters that are not.`);
  }
  return `# Written by scripts/lab/tokenConfig.ts; removed when the server stops.\nc.${app}.token = '${token}'\n`;
}

/**
 * Writes the token into a new config file that only this user can read, in a new folder under
 * `parent` (default: the system's temporary folder) that only this user can enter.
 */
export function writeTokenConfig(token: string, app: TokenApp = 'ServerApp', parent: string = os.tmpdir()): TokenConfig {
  const text = tokenConfigText(token, app);
  // mkdtemp creates the folder with mode 0700; chmod again in case a umask or ACL differs.
  const dir = fs.mkdtempSync(path.join(parent, 'tfjs-accumulate-jupyter-'));
  fs.chmodSync(dir, 0o700);
  const file = path.join(dir, 'jupyter_token_config.py');
  // `wx`: never through a file someone placed there; mode 0600 from the first byte.
  fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
  return { file, dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
