import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { runNotebook } from '../../../scripts/notebooks/runner';
import { activeLocale, LOCALE_ENV, looksEnglish, MissingTranslationError, setLocale, translateText, translator } from '../../../src/tutorial/plot/locale';

describe('activeLocale', () => {
  const cwd = process.cwd();
  afterEach(() => {
    setLocale(undefined);
    delete process.env[LOCALE_ENV];
    process.chdir(cwd);
  });

  it('is zh in a folder named zh, the way every kernel starts a notebook of notebooks/zh/, and en elsewhere', () => {
    const root = mkdtempSync(join(tmpdir(), 'locale-'));
    try {
      mkdirSync(join(root, 'notebooks', 'zh'), { recursive: true });
      process.chdir(join(root, 'notebooks'));
      assert.equal(activeLocale(), 'en');
      process.chdir(join(root, 'notebooks', 'zh'));
      assert.equal(activeLocale(), 'zh');
    } finally {
      process.chdir(cwd);
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('follows TFJS_ACCUMULATE_LOCALE over the folder, and setLocale over both', () => {
    process.env[LOCALE_ENV] = 'zh';
    assert.equal(activeLocale(), 'zh');
    assert.equal(setLocale('en'), undefined);
    assert.equal(activeLocale(), 'en');
    assert.equal(setLocale(undefined), 'en', 'returns the locale chosen before');
    assert.equal(activeLocale(), 'zh');
  });

  it('refuses a locale it cannot write, naming what it accepts (negative cases)', () => {
    assert.throws(() => setLocale('fr' as never), /setLocale: locale must be one of "en", "zh", or undefined for automatic; got "fr"/);
    process.env[LOCALE_ENV] = 'zh-TW';
    assert.throws(() => activeLocale(), /activeLocale: TFJS_ACCUMULATE_LOCALE must be one of "en", "zh"; got "zh-TW"/);
  });
});

describe('translateText', () => {
  it('finds exact entries, keeps en as it is, and has no entry for an unknown text', () => {
    assert.equal(translateText('microStep', 'zh'), '微步');
    assert.equal(translateText('CNN', 'zh'), 'CNN', 'an entry mapping a text to itself keeps it');
    assert.equal(translateText('microStep', 'en'), 'microStep');
    assert.equal(translateText('no such text here', 'zh'), undefined);
  });

  it('fills templates in order, translating each value that has an entry itself', () => {
    assert.equal(translateText('microBatchSize 16', 'zh'), '微批次大小 16');
    assert.equal(translateText('Training loss, batch normalization (mean over seeds, smoothed over 5 updates)', 'zh'), '训练损失，批归一化（各随机种子的平均，按 5 次更新平滑）');
    assert.equal(translateText('layer 2 (16 values per sample): |mu_B - mu| / sigma', 'zh'), '第 2 层（每个样本 16 个值）：|μ_B − μ| / σ');
    assert.equal(
      translateText('Test error by micro-batch size (logical batch 64, MLP on MNIST, 3 seeds; bars ±2 standard errors)', 'zh'),
      '各微批次大小下的测试错误率（逻辑批次 64，MNIST 上的 MLP，3 个随机种子；误差棒为 ±2 个标准误差）',
    );
  });
});

describe('looksEnglish', () => {
  it('flags Latin words without Chinese, and passes Chinese, numbers, units and single letters', () => {
    assert.deepEqual(['microStep', 'The chart as text', 'GFLOP/s'].map(looksEnglish), [true, true, true]);
    assert.deepEqual(['峰值 1x16 (MiB)', '本库：windowLoss', '4x16 / 1x64', '42', 'x', ''].map(looksEnglish), [false, false, false, false, false, false]);
  });
});

describe('translator', () => {
  it('collects every text that looks English and has no entry, and throws them together (negative case)', () => {
    const tr = translator('showTable', 'zh');
    assert.equal(tr.text('model'), '模型');
    assert.equal(tr.text('已经是中文'), '已经是中文');
    assert.equal(tr.text('tokens per second'), 'tokens per second');
    assert.equal(tr.text('throughput'), 'throughput');
    assert.equal(tr.value('per-sample'), 'per-sample', 'a cell may be an identifier: kept, never missing');
    assert.equal(tr.value('yes'), '是');
    assert.throws(
      () => tr.check(),
      (e: unknown) =>
        e instanceof MissingTranslationError &&
        e.name === 'MissingTranslationError' &&
        e.texts.join('|') === 'tokens per second|throughput' &&
        /^showTable: no zh translation for "tokens per second", "throughput"\. Add each to src\/tutorial\/plot\/locales\/zh\.ts/.test(e.message),
    );
  });

  it('finds nothing missing in en', () => {
    const tr = translator('showTable', 'en');
    assert.equal(tr.text('tokens per second'), 'tokens per second');
    tr.check();
  });
});

describe('the locale in a real tslab kernel run by npm run notebooks (needs npm run build)', () => {
  // Under build/, so that the notebooks resolve tfjs-accumulate as the chapters do.
  let root: string;
  before(() => {
    mkdirSync(join(__dirname, '..', '..', '..', 'build'), { recursive: true });
    root = mkdtempSync(join(__dirname, '..', '..', '..', 'build', 'locale-kernel-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  /** A one-cell notebook in `root/folder` that shows a table with these headers. */
  const notebook = (folder: string, headers: string[]): string => {
    mkdirSync(join(root, folder), { recursive: true });
    const file = join(root, folder, 'table.ipynb');
    const row = Object.fromEntries(headers.map((h, i) => [h, i]));
    const source = `import { showTable } from 'tfjs-accumulate/tutorial';\nawait showTable([${JSON.stringify(row)}]);`;
    const kernelspec = { name: 'tslab', display_name: 'TypeScript', language: 'typescript' };
    writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { kernelspec }, cells: [{ cell_type: 'code', metadata: {}, source, outputs: [], execution_count: null }] }));
    return file;
  };
  const run = (file: string) => runNotebook(file, { outDir: join(root, 'out', file.split(/[\\/]/).slice(-2, -1)[0]), log: () => {} });

  it('translates the headers of a notebook in a zh folder, with no line of code for it', async () => {
    const report = await run(notebook('zh', ['model', '差距']));
    assert.equal(report.status, 'ok', JSON.stringify(report.error));
    const html = (JSON.parse(readFileSync(report.outFile!, 'utf8')).cells[0].outputs[0].data['text/html'] as string[] | string).toString();
    assert.match(html, /<th scope="col"[^>]*>模型<\/th>/);
  });

  it('fails the zh cell on a header with no translation, and passes it in English (negative case)', async () => {
    const zh = await run(notebook('zh', ['throughput']));
    assert.equal(zh.status, 'failed');
    assert.match(JSON.stringify(zh.error), /MissingTranslationError|no zh translation for \\"throughput\\"/);
    const en = await run(notebook('en', ['throughput']));
    assert.equal(en.status, 'ok', JSON.stringify(en.error));
  });
});
