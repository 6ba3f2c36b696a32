import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OUTPUT_STYLES, sanitizeOutput } from '../../../scripts/site/htmlOutput';
import { tableBundle } from '../../../src/tutorial/plot';
import { HOSTILE_HTML, REMOTE } from '../../fixtures/hostileNotebooks';

describe('sanitizeOutput', () => {
  it('keeps the tables showTable sends, and plain text structure, untouched', () => {
    const table = tableBundle([{ a: 1, b: '<x>' }], { caption: 'c' }).data['text/html'];
    assert.deepEqual(sanitizeOutput(table), { html: table, removed: false });
    assert.deepEqual(sanitizeOutput('<b title="t">kept</b> 1 &lt; 2 <br />'), { html: '<b title="t">kept</b> 1 &lt; 2 <br />', removed: false });
    assert.equal(sanitizeOutput('<td style="color: #d55e00; text-align: right; padding: 0 4px; border-bottom: 1px solid rgb(0, 0, 0)">x</td>').removed, false);
  });

  it('removes what runs code: scripts, handlers, javascript: in any spelling, comments', () => {
    const cases = ['<script>alert(1)</script>x', '<img src=x onerror=alert(1)>x', '<b onclick="alert(1)">x</b>', '<a href="javascript:alert(1)">x</a>', '<a href="&#106;avascript:alert(1)">x</a>', '<a href="java\tscript:alert(1)">x</a>', '<svg><script>x</script></svg>x', '<iframe srcdoc="<script>x</script>"></iframe>x', '<form action="javascript:x"><button>x</button></form>'];
    for (const html of cases) {
      const out = sanitizeOutput(html);
      assert.equal(out.removed, true, html);
      assert.doesNotMatch(out.html, /script|onerror|onclick|href|src|<a|<svg|<iframe|<form|<button/i, html);
    }
    assert.deepEqual(sanitizeOutput('<!-- x --><b>y</b>'), { html: '<b>y</b>', removed: false });
  });

  it('removes every remote resource from styles and attributes: image-set, -webkit-image-set, url(, src, srcset, xlink:href', () => {
    for (const [name, html] of Object.entries(HOSTILE_HTML).filter(([n]) => !/Overlay|siteClass/.test(n))) {
      const out = sanitizeOutput(html);
      assert.equal(out.removed, true, name);
      assert.ok(!out.html.includes(REMOTE) && !/style="[^"]*(?:image-set|url\(|\\)|\s(?:src|srcset|xlink:href|href|poster)=/i.test(out.html), `${name}: ${out.html}`);
    }
    assert.equal(sanitizeOutput(HOSTILE_HTML.webkitImageSet).html, '<span style="color:red">-webkit-image-set</span>', 'the rest of the style stays');
  });

  it('removes what could cover the page: position fixed or sticky, z-index, transforms, negative margins, ids, the site’s classes', () => {
    const cases: [string, string][] = [
      [HOSTILE_HTML.fixedOverlay, '<div style="width:100vw;height:100vh;background-color:white">'],
      [HOSTILE_HTML.stickyOverlay, '<div>'],
      ['<p style="transform: translate(0, -500px)">x</p>', '<p>x</p>'],
      ['<p style="margin: -999px 0 0 0">x</p>', '<p>x</p>'],
      ['<b id="ui-strings">x</b>', '<b>x</b>'],
      [HOSTILE_HTML.siteClass, '<div>'],
    ];
    for (const [html, starts] of cases) {
      const out = sanitizeOutput(html);
      assert.equal(out.removed, true, html);
      assert.ok(out.html.startsWith(starts.replace(/height:100vh;/, '')) || out.html.startsWith(starts), `${html} → ${out.html}`);
      assert.doesNotMatch(out.html, /position|z-index|transform|-999|id=|skip-link|chapter-nav/);
    }
    assert.equal(sanitizeOutput('<div class="tfjs-accumulate-table">x</div>').removed, false, "the library's own classes stay");
  });

  it('allows no CSS property that takes a URL or positions a box', () => {
    for (const property of ['position', 'z-index', 'top', 'left', 'inset', 'transform', 'background', 'background-image', 'list-style-image', 'cursor', 'content', 'filter', 'mask', 'border-image', 'height']) {
      assert.equal(property in OUTPUT_STYLES, false, property);
    }
  });
});
