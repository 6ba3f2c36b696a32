import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { exportSite } from '../../../scripts/site/exportSite';
import { BUNDLE_TRACE_TYPES, chartHtml, missingTraceTypes, PLOTLY_BUNDLE } from '../../../scripts/site/plotlyBundle';
import { figureBundle, lineChart, localizeFigure, type PlotlyFigure } from '../../../src/tutorial/plot';

const line = lineChart({ title: 'Loss <per> update', xTitle: 'updateStep', yTitle: 'loss', series: [{ name: 's', x: [1, 2], y: [1, 0.5] }] });
const heatmap: PlotlyFigure = { data: [{ type: 'heatmap' as never, x: [1], y: [1] }], layout: { title: { text: 'A heatmap' } } };

describe('missingTraceTypes', () => {
  it('is empty for the figures the plot module makes, and names a type the bundle lacks', () => {
    assert.deepEqual(missingTraceTypes(line), []);
    assert.deepEqual(missingTraceTypes(heatmap), ['heatmap']);
    assert.deepEqual([...BUNDLE_TRACE_TYPES].sort(), ['bar', 'pie', 'scatter']);
    assert.ok(fs.existsSync(require.resolve(PLOTLY_BUNDLE)));
  });
});

describe('chartHtml', () => {
  it('labels the chart, keeps its static SVG and text, and gives plotly.js a layout without a fixed width', () => {
    const out = chartHtml({ ...line, layout: { ...line.layout, width: 720 } }, 'figure-3-1').value;
    assert.match(out, /<div class="chart" role="img" aria-label="Chart: Loss &lt;per&gt; update" aria-describedby="figure-3-1-text">/);
    assert.match(out, /<div class="static-chart" aria-hidden="true"><svg /);
    assert.match(out, /<pre id="figure-3-1-text">Loss &lt;per&gt; update \(x: updateStep, y: loss\)/);
    const json = JSON.parse(/<script type="application\/json" class="plotly-data">(.*?)<\/script>/s.exec(out)![1]) as PlotlyFigure;
    assert.equal(json.layout.width, undefined);
    assert.match(out, /<summary>The chart as text<\/summary>/);
  });

  it('labels a figure a Chinese notebook showed in Chinese, from the locale the figure carries', () => {
    const zh = localizeFigure(lineChart({ title: '损失', xTitle: 'updateStep', yTitle: '损失', series: [{ name: '本库', x: [1, 2], y: [1, 0.5] }] }), 'zh');
    const out = chartHtml(zh, 'figure-1-1').value;
    assert.match(out, /aria-label="图表：损失"/);
    assert.match(out, /<summary>图表的文字版<\/summary><pre id="figure-1-1-text">损失（x: 更新步，y: 损失）/);
  });
});

describe('exportSite and the bundle', () => {
  it('fails the export, naming the notebook, the cell and the figure, when a trace type is missing', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plotlyBundle-test-'));
    try {
      const nb = { nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: 'code', metadata: {}, source: 'x', execution_count: 1, outputs: [{ output_type: 'display_data', ...figureBundle(heatmap) }] }] };
      fs.mkdirSync(path.join(tmp, 'in'));
      fs.writeFileSync(path.join(tmp, 'in', 'h.ipynb'), JSON.stringify(nb));
      assert.throws(() => exportSite({ inDir: path.join(tmp, 'in'), outDir: path.join(tmp, 'out') }), /h\.ipynb, cell 1: the figure "A heatmap" needs trace type\(s\) heatmap, which the site's Plotly bundle \(plotly\.js-basic-dist-min\) lacks\./);
      assert.ok(!fs.existsSync(path.join(tmp, 'out')), 'nothing is written');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
