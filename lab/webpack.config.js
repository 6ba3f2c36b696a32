// The webpack build of the lab app: index.js and everything it imports into build/bundle.js,
// plus, through @jupyterlab/builder's asset step, the extensions' setting schemas, themes and
// the build/style.js that imports their CSS. docs/notebooks.md says why each rule is here.
const path = require('path');
const webpack = require('webpack');
const { Build } = require('@jupyterlab/builder');
const svgToDataUri = require('mini-svg-data-uri');
const pkg = require('./package.json');

const BUILD = path.join(__dirname, 'build');

const assets = Build.ensureAssets({
  packageNames: [...pkg.jupyterlab.extensions, ...pkg.jupyterlab.mimeExtensions],
  output: BUILD,
});

module.exports = [
  {
    mode: 'development',
    entry: './index.js',
    output: { path: BUILD, filename: 'bundle.js' },
    devtool: false,
    bail: true,
    resolve: {
      // @jupyter/web-components imports its own files without extensions, which webpack 5
      // refuses inside packages that say "type": "module" unless this is off.
      fullySpecified: false,
    },
    module: {
      rules: [
        { test: /\.m?js$/, resolve: { fullySpecified: false } },
        // *.raw.css is CSS the code inserts itself (CodeMirror's and the web components'
        // styles), so it comes as a string, not through style-loader.
        { test: /\.raw\.css$/, type: 'asset/source' },
        { test: /(?<!\.raw)\.css$/, use: ['style-loader', 'css-loader'] },
        { test: /\.html$/, type: 'asset/resource' },
        { test: /\.md$/, type: 'asset/source' },
        { test: /\.(jpg|png|gif)$/, type: 'asset/resource' },
        { test: /\.(woff2?|ttf)(\?v=\d+\.\d+\.\d+)?$/, type: 'asset' },
        { test: /\.eot(\?v=\d+\.\d+\.\d+)?$/, type: 'asset/resource' },
        // Icons referenced from CSS become data URIs; icons imported by code are SVG text.
        {
          test: /\.svg(\?v=\d+\.\d+\.\d+)?$/,
          issuer: /\.css$/,
          type: 'asset/inline',
          generator: { dataUrl: (content) => svgToDataUri(content.toString()) },
        },
        { test: /\.svg(\?v=\d+\.\d+\.\d+)?$/, issuer: /\.js$/, type: 'asset/source' },
      ],
    },
    plugins: [
      // Some packages read process.cwd() or process.env (the path polyfill among them).
      new webpack.DefinePlugin({ process: { cwd: () => '/', env: {} } }),
    ],
    performance: { hints: false },
  },
  ...assets,
];
