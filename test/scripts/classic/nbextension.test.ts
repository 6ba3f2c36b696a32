import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { after, describe, it } from 'node:test';
import { installNbextension, NBEXTENSION } from '../../../scripts/classic/nbextension';
import { PLOTLY_BUNDLE } from '../../../scripts/site/plotlyBundle';
import { PLOTLY_MIME } from '../../../src/tutorial/index';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nbextension-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('installNbextension', () => {
  it('puts main.js and the site’s plotly.js under DIR/share/jupyter and enables it in DIR/etc/jupyter, keeping other extensions', () => {
    const prefix = path.join(tmp, 'prefix');
    const nbconfig = path.join(prefix, 'etc', 'jupyter', 'nbconfig');
    fs.mkdirSync(nbconfig, { recursive: true });
    fs.writeFileSync(path.join(nbconfig, 'notebook.json'), JSON.stringify({ load_extensions: { 'other/main': true } }));
    const first = installNbextension({ prefix })!;
    assert.equal(first.dir, path.join(prefix, 'share', 'jupyter', 'nbextensions', 'tfjs-accumulate-plotly'));
    assert.equal(first.config, path.join(nbconfig, 'notebook.json'));
    assert.deepEqual(fs.readdirSync(first.dir).sort(), ['main.js', 'plotly.min.js']);
    assert.ok(fs.readFileSync(path.join(first.dir, 'main.js')).equals(fs.readFileSync(NBEXTENSION.source)));
    assert.ok(fs.readFileSync(path.join(first.dir, 'plotly.min.js')).equals(fs.readFileSync(require.resolve(PLOTLY_BUNDLE))));
    const enabled = { load_extensions: { 'other/main': true, 'tfjs-accumulate-plotly/main': true } };
    assert.deepEqual(JSON.parse(fs.readFileSync(first.config, 'utf8')), enabled);
    // Again: the same files and the same config, nothing added.
    assert.deepEqual(installNbextension({ prefix }), first);
    assert.deepEqual(JSON.parse(fs.readFileSync(first.config, 'utf8')), enabled);
  });

  it('does nothing and says so (undefined) for a Python without classic Notebook 6', () => {
    // Without its site packages, Debian's Python has no `notebook` module.
    const python = path.join(tmp, 'python-without-notebook');
    fs.writeFileSync(python, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n', { mode: 0o755 });
    const prefix = path.join(tmp, 'untouched');
    assert.equal(installNbextension({ python, prefix }), undefined);
    assert.equal(fs.existsSync(prefix), false);
  });

  it('throws with the Python it tried when that Python cannot run', () => {
    assert.throws(() => installNbextension({ python: path.join(tmp, 'no-such-python'), prefix: path.join(tmp, 'p3') }), /installNbextension: installing the classic Notebook extension with .*no-such-python failed/);
  });

  it('copies the very plotly.js the site ships', () => {
    assert.equal(NBEXTENSION.plotly, PLOTLY_BUNDLE);
  });
});

/** main.js run under a stub of classic's AMD loader and OutputArea; returns what it registered. */
function loadMain(notebook: unknown) {
  const registered: { mime: string; append: Function; options: { safe: boolean; index: number } }[] = [];
  const OutputArea = { prototype: { register_mime_type: (mime: string, append: Function, options: never) => registered.push({ mime, append, options }) } };
  let module: { load_ipython_extension(): void } | undefined;
  // jQuery, as far as load_ipython_extension uses it: the style element it adds to the page.
  const $ = () => ({ text: () => ({ appendTo: () => undefined }) });
  const define = (_deps: string[], factory: (...a: unknown[]) => typeof module) => (module = factory(() => undefined, $, { notebook }, { OutputArea }));
  vm.runInNewContext(fs.readFileSync(NBEXTENSION.source, 'utf8'), { define });
  module!.load_ipython_extension();
  return registered;
}

describe('the nbextension main.js', () => {
  it('registers showFigure’s MIME type first in classic’s display order, as safe', () => {
    const registered = loadMain({ _fully_loaded: false, get_cells: () => assert.fail('no cell to redraw before the notebook loaded') });
    assert.deepEqual(JSON.parse(JSON.stringify(registered.map((r) => [r.mime, r.options]))), [[PLOTLY_MIME, { safe: true, index: 0 }]]);
  });

  it('shows again, from their JSON and with their trust, the figures a notebook loaded first showed', () => {
    const calls: string[] = [];
    const area = (outputs: unknown[], trusted: boolean) => ({
      trusted,
      collapsed: false,
      scroll_state: 'auto',
      element: { find: () => ({ length: 0 }) },
      toJSON: () => outputs,
      clear_output() { calls.push('clear'); this.trusted = true; },
      fromJSON(o: unknown[], md: unknown) { calls.push(`fromJSON ${o.length} trusted=${this.trusted} ${JSON.stringify(md)}`); },
    });
    const figure = { output_type: 'display_data', data: { [PLOTLY_MIME]: {}, 'text/html': '' } };
    const cells = [{ output_area: area([figure], false) }, { output_area: area([{ output_type: 'stream', text: 'x' }], true) }, {}];
    loadMain({ _fully_loaded: true, get_cells: () => cells });
    assert.deepEqual(calls, ['clear', 'fromJSON 1 trusted=false {"collapsed":false,"scrolled":"auto"}']);
  });
});
