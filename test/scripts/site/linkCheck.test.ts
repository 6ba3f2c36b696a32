import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportSite } from '../../../scripts/site/exportSite';
import { ACCEPTED_LINKS, BrokenLinksError, checkSiteLinks, linkProblem, pageIds, pageLinks } from '../../../scripts/site/linkCheck';

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'linkCheck-test-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a site of `files` (site path → content) and returns its folder. */
function site(name: string, files: Record<string, string>): string {
  const dir = path.join(tmp, name);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

describe('pageLinks and pageIds', () => {
  it("read every href, src and action outside scripts, named by an <a>'s text or the element", () => {
    const page = '<a class="x" href="a.html#b&amp;c">The <code>a</code> page</a><img alt="" src="i.png"><form action="search.html"></form><script>var s = \' href="no.html"\';</script><p data-href="no2.html">';
    assert.deepEqual(pageLinks(page), [
      { name: 'The a page', href: 'a.html#b&c' },
      { name: '<img>', href: 'i.png' },
      { name: '<form>', href: 'search.html' },
    ]);
  });

  it('read ids on any element, entities decoded, and not a data-id', () => {
    assert.deepEqual([...pageIds('<h2 id="a-b">x</h2><section class="c" id="cell-3"></section><p data-id="no"></p><div id="&quot;q&quot;">')], ['a-b', 'cell-3', '"q"']);
  });
});

describe('linkProblem', () => {
  const files = new Set(['index.html', 'docs/a.html', 'zh/index.html', 'notebooks/x.ipynb']);
  const ids: Record<string, string[]> = { 'docs/a.html': ['limits', '中文'], 'index.html': ['contents'] };
  const problem = (from: string, href: string) => linkProblem(from, href, files, (p) => new Set(ids[p] ?? []));

  it('accepts files of the site, ids on their pages, and absolute URLs', () => {
    for (const [from, href] of [
      ['index.html', 'docs/a.html#limits'],
      ['zh/index.html', '../docs/a.html'],
      ['docs/a.html', '#limits'],
      ['docs/a.html', '#%E4%B8%AD%E6%96%87'],
      ['docs/a.html', '../index.html#contents'],
      ['docs/a.html', '../'],
      ['index.html', 'notebooks/x.ipynb'],
      ['index.html', 'https://example.org/x'],
      ['index.html', 'mailto:a@example.org'],
      ['index.html', 'data:,'],
      ['index.html', '#'],
    ]) {
      assert.equal(problem(from, href), null, `${from} → ${href}`);
    }
  });

  it('reports a missing file, a missing id, a path out of the site, and what a browser reads differently', () => {
    assert.equal(problem('zh/index.html', '../docs/b.html'), 'no file docs/b.html in the site');
    assert.equal(problem('docs/a.html', '#nope'), 'docs/a.html has no element with id "nope"');
    assert.equal(problem('index.html', 'docs/a.html#Limits'), 'docs/a.html has no element with id "Limits"');
    assert.equal(problem('index.html', '../docs/guarantees.md'), 'it resolves to ../docs/guarantees.md, outside the site');
    assert.match(problem('index.html', '/docs/a.html')!, /root-absolute/);
    assert.match(problem('index.html', '//example.org/a')!, /protocol-relative/);
    assert.equal(problem('index.html', 'javascript:alert(1)'), 'the scheme javascript: is not followed');
  });
});

describe('checkSiteLinks', () => {
  it('finds nothing in a site whose links all resolve', () => {
    const dir = site('good', { 'index.html': '<a href="docs/a.html#x">A</a>', 'docs/a.html': '<h1 id="x">A</h1><a href="../index.html">home</a>' });
    assert.deepEqual(checkSiteLinks(dir), []);
  });

  it('reports each broken link by page, name and target (negative case)', () => {
    const dir = site('bad', {
      'index.html': '<a href="docs/a.html#x">A</a><a href="docs/missing.html">the missing page</a>',
      'zh/index.html': '<a href="../docs/a.html#nope">没有的锚点</a>',
      'docs/a.html': '<h1 id="x">A</h1>',
    });
    assert.deepEqual(checkSiteLinks(dir), [
      { file: 'index.html', name: 'the missing page', href: 'docs/missing.html', reason: 'no file docs/missing.html in the site' },
      { file: 'zh/index.html', name: '没有的锚点', href: '../docs/a.html#nope', reason: 'docs/a.html has no element with id "nope"' },
    ]);
  });
});

describe('exportSite follows every link it wrote', () => {
  it('fails with BrokenLinksError naming the link, its page and its target, and says what is accepted (negative case)', () => {
    const inDir = path.join(tmp, 'executed');
    fs.mkdirSync(inDir);
    const md = (source: string) => ({ cell_type: 'markdown', metadata: {}, source });
    fs.writeFileSync(
      path.join(inDir, '01-one.ipynb'),
      JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [md('# One\n\nThe subtitle.\n\nSee [the limits](../docs/guarantees.md#limits), [a lost page](../docs/nowhere.md) and [no such section](#nowhere).')] }),
    );
    let error: unknown;
    try {
      exportSite({ inDir, outDir: path.join(tmp, 'broken-site') });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof BrokenLinksError, String(error));
    assert.deepEqual(
      error.links.map((b) => [b.file, b.name, b.href]),
      [
        ['01-one.html', 'a lost page', '../docs/nowhere.md'],
        ['01-one.html', 'no such section', '#nowhere'],
      ],
    );
    assert.match(error.message, /^2 broken link\(s\) on the site/);
    assert.ok(error.message.includes(ACCEPTED_LINKS));
    assert.ok(error.message.includes('01-one.html: "a lost page" → ../docs/nowhere.md: it resolves to ../docs/nowhere.md, outside the site'), error.message);
  });
});

describe("the project's own notebooks and docs", () => {
  it('make a site where every link resolves: chapters to docs/ in both editions, docs to each other (from the committed notebooks; executed ones add only outputs)', () => {
    const root = path.join(__dirname, '..', '..', '..');
    const out = path.join(tmp, 'project-site');
    const report = exportSite({ inDir: path.join(root, 'notebooks'), outDir: out });
    const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).length;
    assert.equal(report.docs.length, 2 * docs, 'one docs page per docs/*.md in each edition');
    // The chapters link docs/ pages: none of those links may leave the site.
    const chapterLinks = report.pages.flatMap((p) => pageLinks(fs.readFileSync(p.file, 'utf8')).filter((l) => /(^|\/)docs\//.test(l.href)));
    assert.ok(chapterLinks.length >= 24, `the chapters link docs/ ${chapterLinks.length} times`);
    assert.deepEqual(chapterLinks.filter((l) => l.href.includes('.md')), []);
  });
});
