import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { barChart, FONT_SIZE, lineChart, type PlotlyFigure } from '../../../src/tutorial/plot/figures';
import { balancedLines, figureImage, figureSvg, legendLayout, textWidth, wrapText } from '../../../src/tutorial/plot/svg';

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
    assert.match(svg, /^<svg [^>]*width="480" height="420" viewBox="0 0 480 420" style="max-width:100%;height:auto"/);
  });

  it('ticks a log axis at the data (1, 2, 4, …, 32), not at decades only', () => {
    const fig = lineChart({ title: 't', xTitle: 'microBatchSize', yTitle: 'y', logX: true, series: [{ name: 's', x: [1, 2, 4, 8, 16, 32], y: [5, 4, 3, 3, 2, 2] }] });
    const labels = [...figureSvg(fig).matchAll(/<text x="[\d.]+" y="([\d.]+)" text-anchor="middle">([^<]*)<\/text>/g)];
    const row = labels.filter((m) => m[1] === labels[0][1]).map((m) => m[2]);
    assert.deepEqual(row, ['1', '2', '4', '8', '16', '32']);
    // Negative case: the same chart with its tickvals removed falls back to decades (with 2 and 5).
    delete (fig.layout.xaxis as { tickvals?: unknown }).tickvals;
    const fallback = [...figureSvg(fig).matchAll(/<text x="[\d.]+" y="([\d.]+)" text-anchor="middle">([^<]*)<\/text>/g)];
    assert.deepEqual(fallback.filter((m) => m[1] === fallback[0][1]).map((m) => m[2]), ['1', '2', '5', '10', '20']);
  });

  it('lays the legend out in rows so that no two entries overlap, whatever their length', () => {
    const long = ['本库（平均后梯度的范数）', '朴素做法（梯度之和的范数）', 'library (norm of the averaged gradient)', 'naive (norm of the summed gradients)'];
    const fig = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: long.map((name, i) => ({ name, x: [1, 2], y: [i, i + 1] })) });
    const { items, rows } = legendLayout(fig, FONT_SIZE, 12, 468);
    assert.ok(rows >= 3, `${rows} rows`);
    for (const [i, a] of items.entries()) {
      const end = a.x + 20 + textWidth(a.name, FONT_SIZE);
      assert.ok(end <= 468 || a.x === 12, `${a.name} runs past the edge`);
      const next = items[i + 1];
      if (next && next.row === a.row) assert.ok(next.x >= end, `${a.name} overlaps ${next.name}`);
    }
    // Negative case: two long names on one row of 480 px would overlap.
    assert.ok(20 + textWidth(long[2], FONT_SIZE) + 20 + textWidth(long[3], FONT_SIZE) > 456);
  });

  it('draws no text smaller than 10 px on a 390 px phone (a 358 px column), and wraps a long Chinese title', () => {
    const title = '各微批次大小下的测试错误率（逻辑批次 64，MNIST 上的 MLP，3 个随机种子）';
    const svg = figureSvg(lineChart({ title, xTitle: '微批次大小', yTitle: '测试错误率（%）', series: [{ name: '批归一化', x: [1, 2], y: [1, 2] }] }));
    const width = Number(/^<svg [^>]*width="(\d+)"/.exec(svg)![1]);
    const sizes = [...svg.matchAll(/font-size="(\d+(?:\.\d+)?)"/g)].map((m) => Number(m[1]));
    assert.ok(Math.min(...sizes) * Math.min(1, 358 / width) >= 10, `smallest text ${Math.min(...sizes)} px drawn at ${width} px`);
    const titleLines = [...svg.matchAll(/<text [^>]*font-size="16">([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.ok(titleLines.length >= 2, 'wrapped');
    assert.equal(titleLines.join('').replace(/ /g, ''), title.replace(/ /g, ''), 'nothing lost');
    for (const line of titleLines) assert.ok(textWidth(line, 16) <= width - 20, line);
  });

  it('balances a wrapped title, so that it does not end in a line of one character', () => {
    const title = '一个 64 样本逻辑批次的梯度范数，随 accumulationSteps 变化';
    const greedy = wrapText(title, 16, 460);
    const balanced = balancedLines(title, 16, 460);
    assert.equal(balanced.length, greedy.length);
    assert.equal(balanced.join('').replace(/ /g, ''), title.replace(/ /g, ''));
    const spread = (lines: string[]) => Math.max(...lines.map((l) => textWidth(l, 16))) - Math.min(...lines.map((l) => textWidth(l, 16)));
    assert.ok(spread(balanced) < spread(greedy), `${JSON.stringify(balanced)} vs ${JSON.stringify(greedy)}`);
    assert.ok(balanced.every((l) => textWidth(l, 16) <= 460));
  });

  it('wraps long category labels within their slot, so neighbours never collide', () => {
    const names = ['单线程', '2 个工作线程，每个窗口一次', '2 个工作线程，每轮一次'];
    const fig = barChart({ title: 't', xTitle: '训练方式', yTitle: 'ms', series: [{ name: '实测', x: names, y: [1, 2, 3] }] });
    const svg = figureSvg(fig);
    const labels = [...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+" text-anchor="middle">([^<]*)<\/text>/g)].filter((m) => names.some((n) => n.includes(m[2]) && m[2] !== '训练方式'));
    const byX = new Map<string, string[]>();
    for (const [, x, text] of labels) byX.set(x, [...(byX.get(x) ?? []), text]);
    assert.deepEqual([...byX.values()].map((l) => l.join('')), names, 'every label drawn whole, in order');
    const xs = [...byX.keys()].map(Number);
    const slot = xs[1] - xs[0];
    for (const l of byX.values()) for (const text of l) assert.ok(textWidth(text, FONT_SIZE) <= slot, `${text} is wider than its slot`);
    assert.ok(byX.get(String(xs[1].toFixed(1)))!.length >= 2, 'the long label wrapped');
  });

  it('draws a legend for one trace only when the layout asks, as Plotly does', () => {
    const one = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 'only-series', x: [1, 2], y: [1, 2] }] });
    assert.doesNotMatch(figureSvg(one), />only-series</);
    assert.match(figureSvg({ ...one, layout: { ...one.layout, showlegend: true } }), />only-series</);
  });

  it('takes its fonts and colours from the figure, as Plotly does', () => {
    const fig = lineChart({ title: 't', xTitle: 'x', yTitle: 'y', series: [{ name: 's', x: [1, 2], y: [1, 2] }] });
    fig.layout.font = { family: 'Georgia', size: 15, color: '#111111' };
    fig.layout.paper_bgcolor = '#fafafa';
    assert.match(figureSvg(fig), /^<svg [^>]*font-family="Georgia" font-size="15" fill="#111111"><rect x="0" y="0" width="480" height="420" fill="#fafafa"\/>/);
  });
});

describe('figureImage', () => {
  it('is the static SVG, byte for byte, as an image of its size, with the title as its text', () => {
    const fig = lineChart({ title: '每次更新 <损失> & "loss"', xTitle: 'updateStep', yTitle: 'loss', series: [{ name: 'a', x: [1, 2, 3], y: [3, 2, 1] }] });
    const img = figureImage(fig);
    const [, src, width, height, alt] = /^<img class="tfjs-accumulate-static-figure" src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)" width="(\d+)" height="(\d+)" alt="([^"]*)" style="max-width:100%;height:auto">$/.exec(img)!;
    assert.equal(Buffer.from(src, 'base64').toString('utf8'), figureSvg(fig), 'UTF-8, so the Chinese title survives');
    assert.deepEqual([width, height], ['480', '420']);
    assert.equal(alt, '每次更新 &lt;损失&gt; &amp; &quot;loss&quot;');
  });

  it('encodes a chart larger than one call’s argument limit (about 100,000 bytes)', () => {
    const x = Array.from({ length: 4000 }, (_, i) => i);
    const fig = lineChart({ title: 'long', xTitle: 'x', yTitle: 'y', series: [0, 1, 2].map((k) => ({ name: `s${k}`, x, y: x.map((v) => Math.sin(v / 50 + k)) })) });
    const svg = figureSvg(fig);
    assert.ok(svg.length > 140_000, `${svg.length} characters`); // one spread call of that many bytes throws RangeError
    assert.equal(Buffer.from(/base64,([^"]+)"/.exec(figureImage(fig))![1], 'base64').toString('utf8'), svg);
  });
});
