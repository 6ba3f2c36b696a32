/**
 * Installs and enables the classic Notebook's figure renderer (scripts/classic/nbextension/:
 * its `main.js` and the site's plotly.js), so that `jupyter notebook` draws showFigure's Plotly
 * JSON as the site and JupyterLab do, instead of the library's static SVG. `npm run
 * kernel:install` calls it with the place it writes the kernelspec to (docs/notebooks.md).
 *
 * It goes through classic Notebook's own Python API, so the files land where that Jupyter looks:
 * `<data>/nbextensions/tfjs-accumulate-plotly/` and `load_extensions` in
 * `<config>/nbconfig/notebook.json`, with data and config being
 * - for a prefix DIR: DIR/share/jupyter and DIR/etc/jupyter (seen through `JUPYTER_PATH` and
 *   `JUPYTER_CONFIG_PATH`, as the kernelspec under DIR/share/jupyter is seen through `JUPYTER_PATH`);
 * - per user: Jupyter's user data and config folders (`~/.local/share/jupyter`, `~/.jupyter`);
 * - system-wide: the first system folders (`/usr/local/share/jupyter`, `/usr/local/etc/jupyter`).
 * Running it again overwrites the same files and sets the same key.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The installer's options. */
export interface NbextensionArgs {
  /** Python whose classic Notebook gets the extension. Default `/usr/bin/python3` (Debian's). */
  python?: string;
  /** Install under DIR/share/jupyter and enable in DIR/etc/jupyter. Default: none. */
  prefix?: string;
  /** Install and enable for the current user. Default: true unless root; ignored with `prefix`. */
  user?: boolean;
}

/** Where the extension went. */
export interface NbextensionInstalled {
  /** The folder holding `main.js` and `plotly.min.js`. */
  dir: string;
  /** The nbconfig file that enables it. */
  config: string;
}

const ROOT = path.resolve(__dirname, '..', '..');
export const NBEXTENSION = {
  /** The folder name under `nbextensions/`, and so the first part of its require path. */
  name: 'tfjs-accumulate-plotly',
  /** What `load_extensions` names: the AMD module classic requires. */
  require: 'tfjs-accumulate-plotly/main',
  source: path.join(ROOT, 'scripts', 'classic', 'nbextension', 'main.js'),
  /**
   * The site's plotly.js, which lab/ draws with too: scripts/site/plotlyBundle.ts's PLOTLY_BUNDLE
   * (a test holds the two equal; importing it here would load the whole tutorial library).
   */
  plotly: 'plotly.js-basic-dist-min/plotly-basic.min.js',
};

// Run by the chosen Python: exit 3 when it has no classic Notebook 6 (Notebook 7 and JupyterLab
// have no nbextensions), else install, enable, and print where as JSON.
const PYTHON = `
import json, os, sys
try:
    from notebook.nbextensions import install_nbextension
    from notebook.config_manager import BaseJSONConfigManager
except ImportError:
    sys.exit(3)
from jupyter_core.paths import SYSTEM_CONFIG_PATH, jupyter_config_dir
a = json.loads(sys.argv[1])
dest = install_nbextension(a['source'], overwrite=True, destination=a['name'], user=a['user'], prefix=a['prefix'])
config = os.path.join(a['prefix'], 'etc', 'jupyter') if a['prefix'] else jupyter_config_dir() if a['user'] else SYSTEM_CONFIG_PATH[0]
nbconfig = os.path.join(config, 'nbconfig')
BaseJSONConfigManager(config_dir=nbconfig).update('notebook', {'load_extensions': {a['require']: True}})
print(json.dumps({'dir': dest, 'config': os.path.join(nbconfig, 'notebook.json')}))
`;

/**
 * Installs and enables the extension; returns where, or undefined when `python` has no classic
 * Notebook 6 (nothing to do there). Throws with Jupyter's output when the install fails.
 */
export function installNbextension(args: NbextensionArgs = {}): NbextensionInstalled | undefined {
  const python = args.python ?? '/usr/bin/python3';
  const prefix = args.prefix === undefined ? '' : path.resolve(args.prefix);
  const user = prefix === '' && (args.user ?? process.getuid?.() !== 0);
  // Jupyter copies a folder as it is, so the two files are put together first.
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), `${NBEXTENSION.name}-`));
  try {
    fs.copyFileSync(NBEXTENSION.source, path.join(stage, 'main.js'));
    fs.copyFileSync(require.resolve(NBEXTENSION.plotly, { paths: [ROOT] }), path.join(stage, 'plotly.min.js'));
    const spec = { source: stage, name: NBEXTENSION.name, require: NBEXTENSION.require, user, prefix: prefix || null };
    const r = spawnSync(python, ['-c', PYTHON, JSON.stringify(spec)], {
      encoding: 'utf8',
      // Debian's Python 3.11 prints a debugger warning about frozen modules on every start.
      env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: '1' },
    });
    if (r.status === 3) return undefined;
    const line = r.stdout?.trim().split('\n').pop() ?? '';
    if (r.status !== 0 || !line.startsWith('{')) throw new Error(`installNbextension: installing the classic Notebook extension with ${python} failed:\n${r.stdout ?? ''}${r.stderr ?? ''}${r.error ?? ''}`);
    return JSON.parse(line) as NbextensionInstalled;
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}
