import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml, fileHref, html, scriptJson, trusted } from '../../../scripts/site/html';

describe('html', () => {
  it('escapes every interpolated string and number, in content and in attributes', () => {
    const name = '"><script>alert(1)</script>';
    assert.equal(html`<a title="${name}">${name}</a>`.value, '<a title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</a>');
  });

  it('inserts only SafeHtml as it is: html results and values marked trusted', () => {
    assert.equal(html`<p>${html`<b>${'<i>'}</b>`}${trusted('<em>x</em>')}</p>`.value, '<p><b>&lt;i&gt;</b><em>x</em></p>');
  });

  it('joins arrays and drops null, undefined and false', () => {
    assert.equal(html`${['<', html`<br>`]}${null}${undefined}${false}${0}`.value, '&lt;<br>0');
  });

  it('would let markup through if a string were marked trusted (negative case: the tag is what protects)', () => {
    assert.match(html`${trusted('<script>x</script>')}`.value, /<script>/);
    assert.doesNotMatch(html`${'<script>x</script>'}`.value, /<script>/);
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    assert.equal(escapeHtml(`&<>"'`), '&amp;&lt;&gt;&quot;&#39;');
  });
});

describe('fileHref', () => {
  it('percent-encodes a file name so it cannot end the attribute or become a javascript: URL', () => {
    assert.equal(fileHref('"><img src=x>.html'), '%22%3E%3Cimg%20src%3Dx%3E.html');
    assert.equal(fileHref('javascript:alert(1).html'), 'javascript%3Aalert(1).html');
    assert.equal(fileHref('notebooks/a b.ipynb'), 'notebooks/a%20b.ipynb');
    assert.equal(fileHref('03-x.html', 'the-setup'), '03-x.html#the-setup');
  });
});

describe('scriptJson', () => {
  it('keeps any string from closing the script element', () => {
    const json = scriptJson({ name: '</script><script>alert(1)</script>' });
    assert.doesNotMatch(json, /<\//);
    assert.deepEqual(JSON.parse(json), { name: '</script><script>alert(1)</script>' });
  });
});
