import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineChart } from '../../../src/tutorial/plot/figures';
import { localizeFigure } from '../../../src/tutorial/plot/localize';
import { figureText, figureTextLabel, tickLabel } from '../../../src/tutorial/plot/text';

describe('figureText', () => {
  it('names the title, the axes and each trace with its range', () => {
    const fig = lineChart({ title: 'Loss', xTitle: 'updateStep', yTitle: 'loss', series: [{ name: 'a', x: [1, 2, 3], y: [1, 0.5, 0.25] }] });
    assert.equal(figureText(fig), 'Loss (x: updateStep, y: loss)\n  a: scatter, 3 points, x 1 … 3, y 1 → 0.25 (min 0.25, max 1)');
  });

  it('describes traces with no points in text without failing', () => {
    assert.equal(figureText({ data: [{ type: 'scatter', x: [], y: [] }], layout: {} }), 'Figure (x: x, y: y)\n  trace 0: scatter, 0 points');
  });
});

describe('figureText in the figure’s locale', () => {
  it('writes a translated figure’s text form in Chinese, whichever process draws it, and an English one in English', () => {
    const english = lineChart({ title: 'Loss', xTitle: 'updateStep', yTitle: 'loss', series: [{ name: 'measured', x: [1, 2], y: [1, 0.5] }] });
    const zh = localizeFigure({ ...english, layout: { ...english.layout, title: { text: '损失' }, yaxis: { title: { text: '损失' } } } }, 'zh');
    assert.equal(figureText(zh), '损失（x: 更新步，y: 损失）\n  实测: 折线，2 个点，x 1 … 2，y 1 → 0.5（最小 0.5，最大 1）');
    assert.equal(figureTextLabel(zh), '图表的文字版');
    assert.equal(figureTextLabel(english), 'The chart as text');
    assert.match(figureText(english), /2 points/);
  });
});

describe('tickLabel', () => {
  it('keeps integers, rounds to four significant digits and switches to exponents at the extremes', () => {
    assert.deepEqual([3, 0.123456, 12345.6, 0.0001234].map(tickLabel), ['3', '0.1235', '1.23e+4', '1.23e-4']);
  });
});
