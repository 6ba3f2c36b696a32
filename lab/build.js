// Builds the lab app (webpack.config.js) into build/, printing only warnings, errors and the
// time taken. `npm run lab` and the JupyterLab test run it when build/ is older than its inputs.
const webpack = require('webpack');
const config = require('./webpack.config.js');

const started = Date.now();
webpack(config, (err, stats) => {
  if (err) {
    console.error(err);
    process.exit(1);
  }
  const info = stats.toString({ all: false, errors: true, warnings: true, colors: false });
  if (info.trim()) console.error(info);
  if (stats.hasErrors()) process.exit(1);
  console.log(`lab: built build/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
