/**
 * Safe HTML building for the site. Every page is put together with the `html` tag below, which
 * escapes every interpolated value unless it is already {@link SafeHtml}. A string that comes from
 * a notebook (its file name, its text, the runner's metadata) therefore reaches a page as text
 * unless the exporter has rendered it on purpose (markdown, a highlighted cell, an HTML output).
 */

/** HTML that may be inserted as it is: built by `html`, or rendered on purpose and marked `trusted`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Marks HTML the exporter rendered itself (markdown-it, highlight.js, KaTeX, a notebook's HTML output). */
export function trusted(value: string): SafeHtml {
  return new SafeHtml(value);
}

/** A value as HTML: SafeHtml as it is, arrays joined, nullish and `false` as nothing, the rest escaped. */
function part(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** The template tag every page is built with; see the module comment. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((v, i) => {
    out += part(v) + strings[i + 1];
  });
  return new SafeHtml(out);
}

/**
 * A relative link to a file the exporter wrote from a notebook's name: each path segment
 * percent-encoded, so that no name can end the attribute or become a `javascript:` URL.
 */
export function fileHref(file: string, fragment?: string): string {
  // encodeURIComponent also encodes `:`, so `javascript:x.html` stays a relative path.
  const encoded = file.split('/').map(encodeURIComponent).join('/');
  return fragment ? `${encoded}#${encodeURIComponent(fragment)}` : encoded;
}

/** JSON inside `<script>`: `<` escaped so no value can close the element, and line separators escaped for old parsers. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
