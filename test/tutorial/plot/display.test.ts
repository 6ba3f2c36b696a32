import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { figureBundle, PLOTLY_MIME, showFigure } from '../../../src/tutorial/plot/display';
import type { PlotlyFigure } from '../../../src/tutorial/plot/figures';
import { figureSvg } from '../../../src/tutorial/plot/svg';
import { sampleFigure } from '../../helpers/plot';

// The module the tslab kernel loads; it sets `lastWriteDisplayData` before every cell.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tslabJupyter = require('tslab/dist/jupyter') as { lastWriteDisplayData: unknown };

const figure = sampleFigure;
/** The static SVG inside a bundle's text/html, decoded from its image. */
const svgOf = (html: string): string => Buffer.from(/src="data:image\/svg\+xml;base64,([^"]+)"/.exec(html)![1], 'base64').toString('utf8');

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

  it('draws a static SVG in its HTML, as an image, one line per trace, and upgrades it only where window.Plotly exists', () => {
    const fig = figure();
    const html = figureBundle(fig).data['text/html'];
    assert.equal(svgOf(html), figureSvg(fig), 'the static SVG itself (an English figure is drawn as given)');
    assert.equal(svgOf(html).match(/<polyline /g)?.length, 2);
    assert.match(svgOf(html), /stroke-dasharray/); // the dashed series
    assert.doesNotMatch(html, /<svg/, 'no inline SVG, which a sanitizer would reduce to stray text');
    assert.match(html, /if \(!el \|\| !window\.Plotly\) return;/);
    assert.deepEqual(html.match(/\ssrc="(?!data:)/g), null, 'loads nothing: no CDN, no network');
  });

  it('keeps a trace name that contains </script> from closing the script or the SVG text', () => {
    const html = figureBundle(figure('</script><script>alert(1)</script>')).data['text/html'];
    assert.equal(html.match(/<\/script>/g)?.length, 1, 'only the bundle’s own script element is closed');
    assert.match(svgOf(html), /&lt;\/script&gt;&lt;script&gt;alert\(1\)/);
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

describe('figureBundle in a locale', () => {
  it('sends the translated figure in every representation: Plotly JSON, SVG and text', () => {
    const fig = sampleFigure('本库');
    fig.layout.title = { text: '每次更新的损失' };
    fig.layout.yaxis = { title: { text: '损失' } };
    fig.data[0].name = '累积步数 = 1';
    const bundle = figureBundle(fig, { locale: 'zh' });
    const json = bundle.data[PLOTLY_MIME];
    assert.equal((json.layout.xaxis as { title: { text: string } }).title.text, '更新步');
    assert.deepEqual(json.layout.meta, { locale: 'zh' });
    assert.match(svgOf(bundle.data['text/html']), />更新步</);
    assert.match(bundle.data['text/plain'], /^.*（x: 更新步，y: .*）\n  .*: 折线，3 个点/);
  });

  it('fails, naming the English texts, rather than send them to a Chinese page (negative case)', () => {
    // sampleFigure's title "Loss per update" and yTitle "loss" have no entry in the zh table.
    assert.throws(() => figureBundle(sampleFigure(), { locale: 'zh' }), { name: 'MissingTranslationError', message: /^figureBundle: no zh translation for "Loss per update", "loss", "accumulationSteps = 1", "accumulationSteps = 4"\./ });
  });
});

describe('showFigure', () => {
  afterEach(() => {
    tslabJupyter.lastWriteDisplayData = null;
  });

  it('fails at once, with a clear message, outside a notebook kernel', () => {
    assert.throws(() => showFigure(figure()), /showFigure: no notebook kernel \(tslab or Deno\) is running in this process/);
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

  it("sends the same bundle through Deno.jupyter.display under Deno's kernel, and its promise waits for it", async () => {
    const sent: { obj: Record<string, unknown>; options: unknown }[] = [];
    const g = globalThis as { Deno?: unknown };
    g.Deno = { jupyter: { display: async (obj: Record<string, unknown>, options: unknown) => void sent.push({ obj, options }) } };
    try {
      const fig = figure();
      const pending = showFigure(fig);
      assert.ok(pending instanceof Promise);
      await pending;
      assert.equal(sent.length, 1);
      assert.deepEqual(Object.keys(sent[0].obj).sort(), [PLOTLY_MIME, 'text/html', 'text/plain'].sort());
      assert.deepEqual(sent[0].obj[PLOTLY_MIME], fig);
      assert.deepEqual(sent[0].options, { raw: true });
      // Bad input throws at once rather than rejecting a promise a cell might not await.
      assert.throws(() => showFigure({ data: 'no' } as never), /showFigure/);
      assert.equal(sent.length, 1);
    } finally {
      delete g.Deno;
    }
  });
});
