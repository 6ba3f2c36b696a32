import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { whyNotInert } from '../../../scripts/site/htmlOutput';
import { tableBundle } from '../../../src/tutorial/plot';

describe('whyNotInert', () => {
  it('accepts the tables showTable sends and plain text structure', () => {
    assert.equal(whyNotInert(tableBundle([{ a: 1, b: '<x>' }], { caption: 'c' }).data['text/html']), undefined);
    assert.equal(whyNotInert('<b id="kept">kept</b> 1 < 2 <br/>'), undefined);
  });

  it('names what makes an output active: a script, a handler, a URL, a comment, an entity in an attribute', () => {
    const cases: [string, RegExp][] = [
      ['<script>alert(1)</script>', /the tag <script>/],
      ['<img src=x onerror=alert(1)>', /markup that is not a plain tag/],
      ['<img src="x">', /the tag <img>/],
      ['<b onclick="alert(1)">x</b>', /the attribute onclick on <b>/],
      ['<a href="javascript:alert(1)">x</a>', /the tag <a>/],
      ['<span style="background:url(x)">x</span>', /the value of style on <span>/],
      ['<span title="&#106;avascript">x</span>', /the value of title on <span>/],
      ['<!-- x --><b>y</b>', /markup that is not a plain tag/],
      ['<b title=unquoted>x</b>', /markup that is not a plain tag/],
      ['<svg><script>x</script></svg>', /the tag <svg>/],
    ];
    for (const [html, why] of cases) assert.match(whyNotInert(html) ?? 'inert', why, html);
  });
});
