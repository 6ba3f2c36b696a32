// The lab app: JupyterLab's application shell with the extensions listed in package.json's
// "jupyterlab" field (the builder copies their schemas and themes from that list, so the two
// must agree), plus this folder's Plotly renderer.
import { JupyterLab } from '@jupyterlab/application';
import { PageConfig } from '@jupyterlab/coreutils';
import plotlyRenderer from './plotlyRenderer';

// Chunks and assets load from the server's static URL, which the page config gives; this must
// be set before anything else is loaded.
// eslint-disable-next-line no-undef
__webpack_public_path__ = PageConfig.getOption('fullStaticUrl') + '/';

const styles = import('./build/style.js');

// The language-server plugins need @jupyterlab/lsp's server extension, which jupyter-server
// 1.23 does not have; without them the editors work as before.
const withoutLsp = (m) => asModule(m.default.filter(({ id }) => !id.includes(':language-server')));

// JupyterLab takes a module's default export only when the module says `__esModule`; an object
// made here must say it too, or JupyterLab takes the object itself for the plugin.
function asModule(plugins) {
  return { __esModule: true, default: plugins };
}

const extensions = [
  import('@jupyterlab/application-extension'),
  import('@jupyterlab/apputils-extension'),
  import('@jupyterlab/codemirror-extension'),
  import('@jupyterlab/completer-extension'),
  import('@jupyterlab/console-extension'),
  import('@jupyterlab/csvviewer-extension'),
  import('@jupyterlab/docmanager-extension'),
  import('@jupyterlab/documentsearch-extension'),
  import('@jupyterlab/filebrowser-extension'),
  import('@jupyterlab/fileeditor-extension').then(withoutLsp),
  import('@jupyterlab/help-extension'),
  import('@jupyterlab/imageviewer-extension'),
  import('@jupyterlab/launcher-extension'),
  import('@jupyterlab/mainmenu-extension'),
  import('@jupyterlab/markdownviewer-extension'),
  import('@jupyterlab/markedparser-extension'),
  import('@jupyterlab/mathjax-extension'),
  import('@jupyterlab/metadataform-extension'),
  import('@jupyterlab/notebook-extension').then(withoutLsp),
  import('@jupyterlab/rendermime-extension'),
  import('@jupyterlab/running-extension'),
  import('@jupyterlab/settingeditor-extension'),
  import('@jupyterlab/shortcuts-extension'),
  import('@jupyterlab/statusbar-extension'),
  import('@jupyterlab/theme-dark-extension'),
  import('@jupyterlab/theme-light-extension'),
  import('@jupyterlab/toc-extension'),
  import('@jupyterlab/tooltip-extension'),
  import('@jupyterlab/translation-extension'),
  import('@jupyterlab/ui-components-extension'),
];

// No JSON viewer (@jupyterlab/json-extension): its document factory also accepts notebooks, and
// a notebook opened by URL (/lab/tree/…) before the notebook factory is registered came up in it.
const mimeExtensions = [asModule(plotlyRenderer)];

window.addEventListener('load', async () => {
  await styles;
  const lab = new JupyterLab({ mimeExtensions });
  lab.registerPluginModules(await Promise.all(extensions));
  await lab.start();
  await lab.restored;
  // The end-to-end test and a reader's console reach the app here.
  window.jupyterapp = lab;
});
