import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { barChart, lineChart } from '../../../src/tutorial/plot/figures';
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
  it('gives no fixed width, so that Plotly fits the chart to its container (a 320 px phone included)', () => {
    const fig = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: [1], y: [1] }] });
    assert.equal(fig.layout.width, undefined);
    assert.equal(fig.layout.autosize, true);
  });
});
