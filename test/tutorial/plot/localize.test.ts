import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { barChart, lineChart } from '../../../src/tutorial/plot/figures';
import { MissingTranslationError } from '../../../src/tutorial/plot/locale';
import { figureLocale, localizeFigure } from '../../../src/tutorial/plot/localize';

const memory = () =>
  barChart({
    title: '4 x 16 窗口的内存峰值',
    xTitle: 'model',
    yTitle: 'peak(4 x 16) / peak(1 x 64)',
    series: [
      { name: 'measured', x: ['CNN', 'MLP'], y: [0.25, 0.95] },
      { name: 'expected', x: ['CNN', 'MLP'], y: [0.26, 1.1] },
    ],
  });

describe('localizeFigure', () => {
  it('translates the title, the axis titles, the legend and the categories, and records the locale', () => {
    const english = memory();
    const before = JSON.stringify(english);
    const zh = localizeFigure(english, 'zh');
    assert.equal(JSON.stringify(english), before, 'the input is not changed');
    assert.deepEqual((zh.layout.title as { text: string }).text, '4 x 16 窗口的内存峰值');
    assert.deepEqual([(zh.layout.xaxis as { title: { text: string } }).title.text, (zh.layout.yaxis as { title: { text: string } }).title.text], ['模型', '峰值(4 x 16) / 峰值(1 x 64)']);
    assert.deepEqual(zh.data.map((t) => [t.name, t.x]), [['实测', ['CNN', 'MLP']], ['预期', ['CNN', 'MLP']]]);
    assert.deepEqual(zh.layout.meta, { locale: 'zh' });
    assert.equal(figureLocale(zh), 'zh');
    assert.equal(figureLocale(english), 'en');
    assert.deepEqual(zh.data[0].y, english.data[0].y, 'the data stay');
  });

  it('leaves an English figure as it is in en', () => {
    const english = memory();
    assert.equal(localizeFigure(english, 'en'), english);
  });

  it('fails in zh, listing every English text without a translation, instead of showing English (negative case)', () => {
    const untranslated = lineChart({
      title: 'Throughput by worker count',
      xTitle: 'workers',
      yTitle: '吞吐量',
      logX: true,
      series: [{ name: 'measured', x: [1, 2, 4], y: [1, 1.8, 3.1] }, { name: 'ideal scaling', x: [1, 2, 4], y: [1, 2, 4] }],
    });
    assert.throws(
      () => localizeFigure(untranslated, 'zh', 'showFigure'),
      (e: unknown) => e instanceof MissingTranslationError && e.owner === 'showFigure' && e.texts.join('|') === 'Throughput by worker count|workers|ideal scaling',
    );
  });

  it('translates tick texts, legend titles and annotations too', () => {
    const fig = lineChart({ title: '损失', xTitle: 'updateStep', yTitle: '损失', series: [{ name: 'measured', x: [1], y: [1] }] });
    fig.layout.xaxis = { ...(fig.layout.xaxis as object), tickvals: [1], ticktext: ['once'] };
    fig.layout.legend = { ...(fig.layout.legend as object), title: { text: 'trainer' } };
    fig.layout.annotations = [{ text: 'expected' }];
    const zh = localizeFigure(fig, 'zh');
    assert.deepEqual((zh.layout.xaxis as { ticktext: string[] }).ticktext, ['1 次']);
    assert.equal((zh.layout.legend as { title: { text: string } }).title.text, '训练方式');
    assert.deepEqual(zh.layout.annotations, [{ text: '预期' }]);
  });

  it('refuses a bad figure or locale, naming the parameter', () => {
    assert.throws(() => localizeFigure({ data: 1 } as never, 'zh'), /localizeFigure: fig must be a Plotly figure/);
    assert.throws(() => localizeFigure(memory(), 'de' as never), /localizeFigure: locale must be one of "en", "zh", or left out for the active locale; got "de"/);
  });
});
