import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRepository } from '../../../scripts/site/packageInfo';
import { createMarkdown } from '../../../scripts/site/render';
import { resolveRepoLink, type LinkContext, type SiteMap } from '../../../scripts/site/repoLinks';

/** A repository with two chapters per edition, two docs pages and a few source files. */
const FILES = new Set(['test/helpers/x.ts', 'src/core/a.ts', 'README.md']);
const map = (repository: SiteMap['repository'] = null): SiteMap => ({
  notebooks: new Map([
    ['notebooks/01-one.ipynb', '01-one.html'],
    ['notebooks/02-two.ipynb', '02-two.html'],
    ['notebooks/zh/01-one.ipynb', 'zh/01-one.html'],
  ]),
  docs: new Set(['guarantees.md', 'testing.md']),
  stat: (p) => (FILES.has(p) ? 'file' : p === 'lab' ? 'directory' : null),
  repository,
});
const en = (m = map()): LinkContext => ({ repoPath: 'notebooks/01-one.ipynb', sitePath: '01-one.html', editionDir: '', map: m });
const zh = (m = map()): LinkContext => ({ repoPath: 'notebooks/zh/01-one.ipynb', sitePath: 'zh/01-one.html', editionDir: 'zh/', map: m });
const doc = (editionDir: string, m = map()): LinkContext => ({ repoPath: 'docs/testing.md', sitePath: `${editionDir}docs/testing.html`, editionDir, map: m });

describe('resolveRepoLink', () => {
  it("sends a chapter's link to docs/ to the edition's docs page, fragment kept", () => {
    assert.deepEqual(resolveRepoLink('../docs/guarantees.md#limits', en()), { kind: 'site', href: 'docs/guarantees.html#limits' });
    assert.deepEqual(resolveRepoLink('../../docs/guarantees.md#limits', zh()), { kind: 'site', href: 'docs/guarantees.html#limits' });
    assert.deepEqual(resolveRepoLink('02-two.ipynb#setup', en()), { kind: 'site', href: '02-two.html#setup' });
  });

  it('sends a docs page to its neighbours in the same edition and to the chapters', () => {
    assert.deepEqual(resolveRepoLink('guarantees.md#limits', doc('zh/')), { kind: 'site', href: 'guarantees.html#limits' });
    assert.deepEqual(resolveRepoLink('../notebooks/02-two.ipynb', doc('')), { kind: 'site', href: '../02-two.html' });
  });

  it('renders a source file as code without a repository, and links it into the repository with one', () => {
    assert.deepEqual(resolveRepoLink('../test/helpers/x.ts', doc('')), { kind: 'code', repoPath: 'test/helpers/x.ts' });
    const withRepo = map(parseRepository('github:o/r'));
    assert.deepEqual(resolveRepoLink('../test/helpers/x.ts#L3', doc('', withRepo)), { kind: 'repository', href: 'https://github.com/o/r/blob/HEAD/test/helpers/x.ts#L3' });
    assert.deepEqual(resolveRepoLink('../lab/', doc('', withRepo)), { kind: 'repository', href: 'https://github.com/o/r/tree/HEAD/lab' });
  });

  it('leaves URLs, fragments and paths that name nothing as written, for the link check to report (negative case)', () => {
    for (const href of ['https://example.org/a.md', 'mailto:a@b.c', '#limits', '/abs.md', '../docs/nowhere.md', '../docs/guarantees.md#x'.replace('guarantees', 'missing'), '../../../outside.md']) {
      assert.deepEqual(resolveRepoLink(href, en()), { kind: 'unchanged' }, href);
    }
    // From notebooks/zh/, one `../` reaches notebooks/, where no docs/ is.
    assert.deepEqual(resolveRepoLink('../docs/guarantees.md', zh()), { kind: 'unchanged' });
  });
});

describe('the markdown rule', () => {
  const md = createMarkdown();

  it('rewrites links in rendered markdown, and shows a source file as code, not as a dead link', () => {
    const out = md.render('[limits](../docs/guarantees.md#limits), [`x.ts`](../test/helpers/x.ts) and [the core](../src/core/a.ts)', { links: en() });
    assert.match(out, /<a href="docs\/guarantees.html#limits">limits<\/a>/);
    assert.match(out, /, <code>x.ts<\/code> and <code class="repo-path" title="src\/core\/a.ts">the core<\/code>/);
    assert.doesNotMatch(out, /\.\.\/(test|src)\//);
  });

  it('without a page, still turns a sibling notebook link into its page', () => {
    assert.match(md.render('[two](02-two.ipynb#setup) [docs](../docs/guarantees.md)', {}), /<a href="02-two.html#setup">two<\/a> <a href="..\/docs\/guarantees.md">docs<\/a>/);
  });
});
