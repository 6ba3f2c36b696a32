import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportSite } from '../../../scripts/site/exportSite';
import { UI } from '../../../scripts/site/strings';
import { looksEnglish, spacesAfterChinesePunctuation, translateText } from '../../../src/tutorial/index';

// The "run it in your browser" blocks in both editions, from the committed notebooks (the blocks
// need no outputs). Running them in Chromium is test/e2e/liveBlocks.e2e.ts's job; this checks
// what the exporter writes, and that the charts the blocks draw have their Chinese texts.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const CHAPTERS = ['02-model', '03-accumulation', '04-training-loop'];

let tmp: string;
const read = (rel: string): string => fs.readFileSync(path.join(tmp, 'site', rel), 'utf8');
const blockOf = (rel: string) => /<section class="live-block"[^>]*>[\s\S]*?<\/section>\n<link[^>]*>\n<script[^>]*><\/script>/.exec(read(rel))?.[0];
const attr = (block: string, name: string) => {
  const raw = new RegExp(`${name}="([^"]*)"`).exec(block)?.[1];
  return raw?.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
};

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'site-live-'));
  const inDir = path.join(tmp, 'notebooks');
  fs.mkdirSync(path.join(inDir, 'zh'), { recursive: true });
  for (const c of CHAPTERS) {
    fs.copyFileSync(path.join(ROOT, 'notebooks', `${c}.ipynb`), path.join(inDir, `${c}.ipynb`));
    fs.copyFileSync(path.join(ROOT, 'notebooks', 'zh', `${c}.ipynb`), path.join(inDir, 'zh', `${c}.ipynb`));
  }
  exportSite({ inDir, outDir: path.join(tmp, 'site') });
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the live blocks in both editions', () => {
  it('are on chapters 3 and 4 of each edition, and nowhere else', () => {
    for (const dir of ['', 'zh/']) {
      const withBlock = CHAPTERS.filter((c) => blockOf(`${dir}${c}.html`) !== undefined);
      assert.deepEqual(withBlock, ['03-accumulation', '04-training-loop'], dir || 'English');
    }
  });

  it('speak the page\'s language: the words, the chart\'s locale and the script\'s messages', () => {
    for (const [dir, lang, locale] of [['', 'en', 'en'], ['zh/', 'zh-CN', 'zh']] as const) {
      const t = UI[lang].live;
      for (const c of ['03-accumulation', '04-training-loop']) {
        const block = blockOf(`${dir}${c}.html`)!;
        assert.ok(block.includes(`>${t.heading}</h2>`), `${dir}${c}: heading`);
        assert.ok(block.includes(`>${t.button}</button>`), `${dir}${c}: button`);
        assert.equal(attr(block, 'data-lang'), locale);
        assert.deepEqual(JSON.parse(attr(block, 'data-strings')!), { loading: t.loading, running: t.running, backend: t.backend, failed: t.failed, numbers: t.numbers });
      }
      assert.ok(blockOf(`${dir}03-accumulation.html`)!.includes('<code>GradientAccumulator</code>'));
    }
    // Chinese puts no space after its punctuation (the block's two sentences, the backend line).
    const zhText = blockOf('zh/03-accumulation.html')!.replace(/<[^>]*>/g, '\n');
    assert.deepEqual(spacesAfterChinesePunctuation(zhText), []);
    assert.deepEqual(spacesAfterChinesePunctuation(UI['zh-CN'].live.backend.replace('{name}', 'webgl')), []);
    // Negative case: the Chinese page carries no English sentence of the block.
    const zh = blockOf('zh/03-accumulation.html')!.replace(/<code>[^<]*<\/code>|data-strings="[^"]*"/g, '');
    for (const sentence of Object.values(UI.en.live).filter((v) => typeof v === 'string')) assert.ok(!zh.includes(sentence), sentence);
  });

  it('load their scripts from the site\'s one assets/live/, from either folder', () => {
    for (const rel of ['03-accumulation.html', 'zh/03-accumulation.html']) {
      const block = blockOf(rel)!;
      for (const [, ref] of block.matchAll(/(?:src|href)="([^"]+)"/g)) {
        assert.ok(fs.existsSync(path.join(tmp, 'site', path.dirname(rel), ref)), `${rel}: ${ref} is missing`);
      }
    }
    assert.match(blockOf('zh/04-training-loop.html')!, /src="\.\.\/assets\/live\/loader\.js"/);
  });

  it('draw charts whose every text has a Chinese translation (else the zh block would throw in the browser)', () => {
    const source = fs.readFileSync(path.join(ROOT, 'scripts', 'site', 'live', 'run.ts'), 'utf8');
    const texts = [...source.matchAll(/\b(?:title|xTitle|yTitle|name): '([^']+)'/g)].map((m) => m[1]);
    assert.ok(texts.length >= 10, `found the charts' texts (${texts.length})`);
    const missing = texts.filter((s) => looksEnglish(s) && (translateText(s, 'zh') === undefined || looksEnglish(translateText(s, 'zh')!)));
    assert.deepEqual(missing, []);
  });
});
