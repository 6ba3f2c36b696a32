import assert from 'node:assert/strict';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { barChart, figureBundle, figureSvg, figureText, lineChart, PLOTLY_MIME, showFigure, type PlotlyFigure } from '../src/plot';

// The module the tslab kernel loads; it sets `lastWriteDisplayData` before every cell.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tslabJupyter = require('tslab/dist/jupyter') as { lastWriteDisplayData: unknown };

function figure(name = 'accumulationSteps = 4'): PlotlyFigure {
  return lineChart({
    title: 'Loss per update',
    xTitle: 'updateStep',
    yTitle: 'loss',
    series: [
      { name: 'accumulationSteps = 1', x: [1, 2, 3], y: [1, 0.5, 0.25] },
      { name, x: [1, 2, 3], y: [1, 0.7, 0.4], dashed: true, errorY: [0.1, 0.1, 0.05] },
    ],
  });
}

describe('lineChart', () => {
  it('spells out its style, because plotly.js ignores a template given by name', () => {
    const fig = figure();
    assert.equal(fig.layout.template, undefined);
    assert.equal(fig.layout.plot_bgcolor, '#ffffff');
  });
});

describe('figureBundle', () => {
  it('holds the figure as Plotly JSON, an HTML rendering and plain text in one bundle', () => {
    const fig = figure();
    const bundle = figureBundle(fig);
    assert.deepEqual(Object.keys(bundle.data).sort(), [PLOTLY_MIME, 'text/html', 'text/plain'].sort());
    assert.deepEqual(bundle.data[PLOTLY_MIME], fig);
    assert.equal(
      bundle.data['text/plain'],
      [
        'Loss per update (x: updateStep, y: loss)',
        '  accumulationSteps = 1: scatter, 3 points, x 1 … 3, y 1 → 0.25 (min 0.25, max 1)',
        '  accumulationSteps = 4: scatter, 3 points, x 1 … 3, y 1 → 0.4 (min 0.4, max 1)',
      ].join('\n'),
    );
  });

  it('draws a static SVG in its HTML, one line per trace, and upgrades it only where window.Plotly exists', () => {
    const html = figureBundle(figure()).data['text/html'];
    assert.equal(html.match(/<polyline /g)?.length, 2);
    assert.match(html, /stroke-dasharray/); // the dashed series
    assert.match(html, /if \(!el \|\| !window\.Plotly\) return;/);
    assert.doesNotMatch(html, /\ssrc=/, 'loads nothing: no CDN, no network');
  });

  it('keeps a trace name that contains </script> from closing the script or the SVG text', () => {
    const html = figureBundle(figure('</script><script>alert(1)</script>')).data['text/html'];
    assert.equal(html.match(/<\/script>/g)?.length, 1, 'only the bundle’s own script element is closed');
    assert.match(html, /&lt;\/script&gt;&lt;script&gt;alert\(1\)/);
  });

  it('gives each bundle its own element id', () => {
    const id = (html: string): string => /id="([^"]+)"/.exec(html)![1];
    assert.notEqual(id(figureBundle(figure()).data['text/html']), id(figureBundle(figure()).data['text/html']));
  });

  it('rejects something that is not a figure, naming the parameter', () => {
    assert.throws(() => figureBundle({ data: 'x' } as unknown as PlotlyFigure), {
      message: 'figureBundle: fig must be a Plotly figure { data: trace[], layout: object }; got an object.',
    });
  });
});

describe('figureSvg', () => {
  it('draws log axes, bars and categories without NaN coordinates', () => {
    const logFig = lineChart({ title: 't', xTitle: 'microBatchSize', yTitle: 'seconds', logX: true, logY: true, series: [{ name: 's', x: [1, 10, 100], y: [0.01, 0.1, 10] }] });
    const bars: PlotlyFigure = {
      data: [
        { type: 'bar', name: 'cpu', x: ['GroupNorm', 'BatchNorm'], y: [3, 5] },
        { type: 'bar', name: 'wasm', x: ['GroupNorm', 'BatchNorm'], y: [2, 4] },
      ],
      layout: { title: { text: 'bars' } },
    };
    for (const svg of [figureSvg(logFig), figureSvg(bars)]) {
      assert.doesNotMatch(svg, /NaN|Infinity/);
      assert.match(svg, /^<svg [^>]*>.*<\/svg>$/s);
    }
    assert.equal(figureSvg(bars).match(/<rect [^>]*fill="#(0072B2|D55E00)"/g)?.length, 4 + 2, 'four bars and two legend keys');
    assert.match(figureSvg(bars), />GroupNorm</);
    assert.match(figureSvg(logFig), />100</);
  });

  it('describes traces with no points in text without failing', () => {
    assert.equal(figureText({ data: [{ type: 'scatter', x: [], y: [] }], layout: {} }), 'Figure (x: x, y: y)\n  trace 0: scatter, 0 points');
  });
});

describe('showFigure', () => {
  afterEach(() => {
    tslabJupyter.lastWriteDisplayData = null;
  });

  it('fails with a clear message outside a tslab kernel', () => {
    assert.throws(() => showFigure(figure()), /showFigure: no tslab kernel is running in this process/);
  });

  it('finds the kernel’s writer in another copy of tslab than the one this package resolves', () => {
    // A kernel started from a global tslab, say, loads its own dist/jupyter.js.
    const other = path.join(os.tmpdir(), 'elsewhere', 'node_modules', 'tslab', 'dist', 'jupyter.js');
    const sent: unknown[] = [];
    const mod = new Module(other);
    mod.filename = other;
    mod.loaded = true;
    mod.exports = { lastWriteDisplayData: (content: unknown) => sent.push(content) };
    require.cache[other] = mod;
    try {
      showFigure(figure());
    } finally {
      delete require.cache[other];
    }
    assert.equal(sent.length, 1);
  });

  it('sends one multi-MIME display_data through the kernel’s own writer', () => {
    const sent: unknown[] = [];
    // What tslab's JupyterHandlerImpl does before each cell.
    tslabJupyter.lastWriteDisplayData = (content: unknown, update: unknown) => sent.push({ content, update });
    const fig = figure();
    showFigure(fig);
    assert.equal(sent.length, 1);
    const { content, update } = sent[0] as { content: { data: Record<string, unknown>; metadata: object; transient: object }; update: unknown };
    assert.equal(update, undefined);
    assert.deepEqual(content.data[PLOTLY_MIME], fig);
    assert.equal(typeof content.data['text/html'], 'string');
    assert.equal(typeof content.data['text/plain'], 'string');
    assert.deepEqual(content.metadata, {});
  });
});

describe('barChart', () => {
  it('groups one bar per series in each category, and draws them without plotly.js', () => {
    const fig = barChart({ title: 'Peak memory', xTitle: 'model', yTitle: 'ratio', series: [{ name: 'measured', x: ['CNN', 'MLP'], y: [0.25, 0.95] }, { name: 'expected', x: ['CNN', 'MLP'], y: [0.25, 1.12] }] });
    assert.deepEqual(fig.data.map((t) => [t.type, t.name, t.x, t.y]), [['bar', 'measured', ['CNN', 'MLP'], [0.25, 0.95]], ['bar', 'expected', ['CNN', 'MLP'], [0.25, 1.12]]]);
    assert.equal(fig.layout.barmode, 'group');
    const bars = (figureSvg(fig).match(/<rect [^>]*fill="#[0-9A-F]{6}"/g) ?? []).filter((r) => !r.includes('width="14"')); // not legend swatches
    assert.equal(bars.length, 4, 'four bars');
    assert.throws(() => barChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: ['a'], y: [] }] }), /barChart: series "s" must have as many x as y values/);
  });
});

