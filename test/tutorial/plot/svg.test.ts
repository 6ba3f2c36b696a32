import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineChart, type PlotlyFigure } from '../../../src/tutorial/plot/figures';
import { figureSvg } from '../../../src/tutorial/plot/svg';

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

  it('scales down to its container, keeping its aspect ratio, however wide it was drawn', () => {
    const svg = figureSvg(lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: [1, 2], y: [1, 2] }] }));
    assert.match(svg, /^<svg [^>]*width="720" height="420" viewBox="0 0 720 420" style="max-width:100%;height:auto"/);
  });
});
