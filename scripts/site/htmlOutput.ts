/**
 * Which HTML outputs the site shows as HTML. A notebook's `text/html` output is markup by nature
 * (the tables showTable sends, say), so it cannot be escaped like the notebook's other strings.
 * Instead it is shown as HTML only when it is inert: every tag and attribute on a short allowlist,
 * no comments, no entities that could hide a URL scheme, no style that loads anything. Anything
 * else is shown as the output's text/plain, as Jupyter does for an untrusted notebook.
 */

/** Tags an inert output may use: text structure and tables. */
const TAGS = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'colgroup', 'col', 'div', 'span', 'p', 'br', 'hr', 'b', 'i', 'em', 'strong', 'code', 'pre', 'sub', 'sup', 'small', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Attributes an inert output may use; none of them can hold a URL or a script. */
const ATTRIBUTES = new Set(['class', 'id', 'style', 'scope', 'colspan', 'rowspan', 'title', 'align', 'lang', 'dir']);

const TAG = /^<\/?([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*"[^"<>]*")?)*)\s*\/?>/;
const ATTRIBUTE = /\s+([a-zA-Z-]+)(?:\s*=\s*"([^"<>]*)")?/g;

/** Why `html` is not inert, or undefined if it is. */
export function whyNotInert(html: string): string | undefined {
  for (let i = html.indexOf('<'); i >= 0; i = html.indexOf('<', i + 1)) {
    const rest = html.slice(i);
    if (!/^<[a-zA-Z/!?]/.test(rest)) continue; // a `<` the parser treats as text
    const m = TAG.exec(rest);
    if (!m) return `markup that is not a plain tag at ${JSON.stringify(rest.slice(0, 20))}`;
    const tag = m[1].toLowerCase();
    if (!TAGS.has(tag)) return `the tag <${tag}>`;
    for (const [, name, value] of m[2].matchAll(ATTRIBUTE)) {
      if (!ATTRIBUTES.has(name.toLowerCase())) return `the attribute ${name} on <${tag}>`;
      if (value && /[&\\]|url\s*\(|expression\s*\(|@import/i.test(value)) return `the value of ${name} on <${tag}>`;
    }
  }
  return undefined;
}
