import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';

/** The README and docs/ link to each other and to files in the repository: every link must resolve. */

const ROOT = join(__dirname, '..', '..');
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

/** Relative link targets of a markdown text, without their #fragment. */
export function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]);
}

describe('the README and docs', () => {
  for (const page of pages) {
    it(`${page}: every relative link points at a file that exists`, () => {
      const text = readFileSync(join(ROOT, page), 'utf8');
      const missing = relativeLinks(text).filter((target) => !existsSync(resolve(ROOT, dirname(page), target)));
      assert.deepEqual(missing, [], `${page} links to missing files`);
    });
  }

  it('the link check sees a broken link, and skips URLs, anchors and code', () => {
    const links = relativeLinks('[a](docs/x.md#y) [b](https://example.org) [c](#top)\n```\n[d](nope.md)\n```');
    assert.deepEqual(links, ['docs/x.md']);
    assert.equal(existsSync(resolve(ROOT, links[0])), false);
  });

  it('the README stays short enough for a newcomer', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    assert.ok(lines <= 150, `README.md has ${lines} lines; keep it to 150 and move detail to docs/`);
  });
});
