import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { barChart, dataTicks, DEFAULT_FIGURE_SIZE, FONT_FAMILY, FONT_SIZE, lineChart, PALETTE, TEXT_COLOR } from '../../../src/tutorial/plot/figures';
import { figureSvg } from '../../../src/tutorial/plot/svg';
import { sampleFigure } from '../../helpers/plot';

const figure = sampleFigure;

describe('lineChart', () => {
  it('spells out its style, because plotly.js ignores a template given by name', () => {
    const fig = figure();
    assert.equal(fig.layout.template, undefined);
    assert.equal(fig.layout.plot_bgcolor, '#ffffff');
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

describe('baseLayout', () => {
  it('carries its fonts, colours, height and legend in the figure, so every front end draws the same chart', () => {
    const { layout } = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: [1], y: [1] }] });
    assert.deepEqual(layout.font, { family: FONT_FAMILY, size: FONT_SIZE, color: TEXT_COLOR });
    assert.match(FONT_FAMILY, /Noto Sans CJK SC/, 'a CJK font for the Chinese edition');
    assert.equal(layout.height, DEFAULT_FIGURE_SIZE.height);
    assert.deepEqual(layout.colorway, PALETTE);
    // The legend hangs from the figure's bottom edge, so Plotly makes room for it below the axis title.
    assert.deepEqual([(layout.legend as { yref: string }).yref, (layout.legend as { yanchor: string }).yanchor], ['container', 'bottom']);
  });

  it('ticks a log axis at the data when they take a few integer values, and leaves other axes to Plotly (negative cases)', () => {
    const sizes = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', logX: true, logY: true, series: [{ name: 's', x: [32, 1, 2, 4, 8, 16], y: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }] });
    assert.deepEqual((sizes.layout.xaxis as { tickvals?: number[] }).tickvals, [1, 2, 4, 8, 16, 32]);
    assert.equal((sizes.layout.yaxis as { tickvals?: number[] }).tickvals, undefined, 'continuous values: Plotly’s ticks');
    const linear = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: [1, 2, 4], y: [1, 2, 3] }] });
    assert.equal((linear.layout.xaxis as { tickvals?: number[] }).tickvals, undefined, 'a linear axis keeps Plotly’s ticks');
    assert.equal(dataTicks(Array.from({ length: 13 }, (_, i) => i + 1)), undefined, 'too many values to tick each');
  });

  it('gives no fixed width, so that Plotly fits the chart to its container (a 320 px phone included)', () => {
    const fig = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: [1], y: [1] }] });
    assert.equal(fig.layout.width, undefined);
    assert.equal(fig.layout.autosize, true);
  });
});
