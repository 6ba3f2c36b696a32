import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineChart } from '../../../src/tutorial/plot/figures';
import { figureText, formatNumber } from '../../../src/tutorial/plot/text';

describe('figureText', () => {
  it('names the title, the axes and each trace with its range', () => {
    const fig = lineChart({ title: 'Loss', xTitle: 'updateStep', yTitle: 'loss', series: [{ name: 'a', x: [1, 2, 3], y: [1, 0.5, 0.25] }] });
    assert.equal(figureText(fig), 'Loss (x: updateStep, y: loss)\n  a: scatter, 3 points, x 1 … 3, y 1 → 0.25 (min 0.25, max 1)');
  });

  it('describes traces with no points in text without failing', () => {
    assert.equal(figureText({ data: [{ type: 'scatter', x: [], y: [] }], layout: {} }), 'Figure (x: x, y: y)\n  trace 0: scatter, 0 points');
  });
});

describe('formatNumber', () => {
  it('keeps integers, rounds to four significant digits and switches to exponents at the extremes', () => {
    assert.deepEqual([3, 0.123456, 12345.6, 0.0001234].map(formatNumber), ['3', '0.1235', '1.23e+4', '1.23e-4']);
  });
});
