/**
 * The site's sanitizer for a notebook's `text/html` outputs. Such an output is markup by nature
 * (the tables showTable sends, say), so it cannot be escaped like the notebook's other strings;
 * it goes through sanitize-html (a well-kept sanitizer on htmlparser2 and postcss) with
 * allow-lists of tags, attributes, classes and CSS properties, each property with the grammar of
 * the values it may take. What is not on a list is removed:
 *
 * - anything that runs code: scripts, handlers (`on…`), `javascript:` in any spelling;
 * - anything that loads a resource, so that reading a page tells no one else: no tag or
 *   attribute that holds a URL (`img`, `src`, `srcset`, `href`, `xlink:href`, `<style>`, `<svg>`),
 *   and no CSS value with a function other than colours (`url(`, `image-set(`,
 *   `-webkit-image-set(`, `cross-fade(` …); backgrounds take a colour only;
 * - anything that could leave its box and cover the page (a fake "log in again" over the
 *   chapter): no `position`, `z-index`, `transform`, negative margins, or classes of the
 *   site's own stylesheet (only `tfjs-accumulate-*`), and no `id` (it could clobber the page's
 *   own elements and anchors).
 *
 * Jupyter shows an untrusted notebook's HTML the same way: sanitized, not refused.
 */
import sanitizeHtml from 'sanitize-html';

/** Tags an output may use: text structure and tables. */
export const OUTPUT_TAGS = ['table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'colgroup', 'col', 'div', 'span', 'p', 'br', 'hr', 'b', 'i', 'em', 'strong', 'code', 'pre', 'sub', 'sup', 'small', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

/** Attributes on any allowed tag; none can hold a URL or a script. */
const ATTRIBUTES: sanitizeHtml.AllowedAttribute[] = ['class', 'style', 'title', 'lang', 'colspan', 'rowspan', { name: 'dir', multiple: false, values: ['ltr', 'rtl', 'auto'] }, { name: 'scope', multiple: false, values: ['row', 'col', 'rowgroup', 'colgroup'] }, { name: 'align', multiple: false, values: ['left', 'right', 'center', 'justify'] }];

// The grammar of allowed CSS values. Numbers are never negative, and no function but a colour's.
const NUMBER = String.raw`(?:\d+(?:\.\d+)?|\.\d+)`;
const LENGTH = String.raw`(?:0|${NUMBER}(?:px|em|rem|ex|ch|pt|%|vw|vh))`;
const COLOR = String.raw`(?:#[0-9a-fA-F]{3,8}|[a-zA-Z]+|(?:rgba?|hsla?)\(\s*${NUMBER}(?:deg|%)?(?:\s*[,/]?\s*${NUMBER}%?){2,3}\s*\))`;
const BORDER_STYLE = 'none|hidden|solid|dashed|dotted|double|groove|ridge|inset|outset';
const whole = (pattern: string): RegExp => new RegExp(`^(?:${pattern})$`);
/** One to `n` space-separated items of `item`. */
const upTo = (item: string, n: number): RegExp => whole(`${item}(?:\\s+${item}){0,${n - 1}}`);
const keywords = (...words: string[]): RegExp[] => [whole(words.join('|'))];

const LENGTHS = [upTo(`(?:${LENGTH}|auto)`, 4)];
const SIZE = [whole(`${LENGTH}|auto|max-content|min-content|fit-content`)];
const COLORS = [whole(COLOR)];
const BORDER = [upTo(`(?:${LENGTH}|thin|medium|thick|${BORDER_STYLE}|${COLOR})`, 3)];

/** CSS properties an output may set, each with the values it may take. */
export const OUTPUT_STYLES: Record<string, RegExp[]> = {
  color: COLORS,
  'background-color': COLORS,
  'text-align': keywords('left', 'right', 'center', 'justify', 'start', 'end'),
  'vertical-align': keywords('baseline', 'top', 'middle', 'bottom', 'text-top', 'text-bottom', 'sub', 'super'),
  'font-weight': keywords('normal', 'bold', 'bolder', 'lighter', '[1-9]00'),
  'font-style': keywords('normal', 'italic', 'oblique'),
  'font-size': [whole(`${LENGTH}|xx-small|x-small|small|medium|large|x-large|xx-large|smaller|larger`)],
  'font-family': [whole(`[\\w\\s,'"-]+`)],
  'font-variant-numeric': keywords('normal', 'tabular-nums', 'proportional-nums', 'lining-nums', 'oldstyle-nums'),
  'text-decoration': keywords('none', 'underline', 'overline', 'line-through'),
  'white-space': keywords('normal', 'nowrap', 'pre', 'pre-wrap', 'pre-line', 'break-spaces'),
  'line-height': [whole(`normal|${NUMBER}|${LENGTH}`)],
  display: keywords('none', 'block', 'inline', 'inline-block', 'table', 'table-row', 'table-cell', 'table-caption', 'list-item'),
  'border-collapse': keywords('collapse', 'separate'),
  'border-spacing': [upTo(LENGTH, 2)],
  'caption-side': keywords('top', 'bottom'),
  width: SIZE,
  'min-width': SIZE,
  'max-width': [whole(`${LENGTH}|none`)],
  ...Object.fromEntries(['padding', 'margin'].flatMap((p) => [p, ...['top', 'right', 'bottom', 'left'].map((s) => `${p}-${s}`)].map((name) => [name, LENGTHS]))),
  ...Object.fromEntries(['border', 'border-top', 'border-right', 'border-bottom', 'border-left'].map((name) => [name, BORDER])),
  'border-color': [upTo(COLOR, 4)],
  'border-style': [upTo(`(?:${BORDER_STYLE})`, 4)],
  'border-width': [upTo(`(?:${LENGTH}|thin|medium|thick)`, 4)],
};

const POLICY: sanitizeHtml.IOptions = {
  allowedTags: OUTPUT_TAGS,
  // Per tag: sanitize-html checks an attribute's allowed values only on a named tag, not on '*'.
  allowedAttributes: Object.fromEntries(OUTPUT_TAGS.map((tag) => [tag, ATTRIBUTES])),
  // The site's stylesheet has position and z-index rules; an output takes none of its classes.
  allowedClasses: { '*': ['tfjs-accumulate-*'] },
  allowedStyles: { '*': OUTPUT_STYLES },
  allowedSchemes: [],
  allowedSchemesAppliedToAttributes: [],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
};

/**
 * The same parse and serialization with nothing removed, so that comparing it with the
 * sanitized output tells whether the sanitizer removed anything (whitespace in styles and
 * attribute quoting come out the same way in both).
 */
const UNCHANGED: sanitizeHtml.IOptions = { allowedTags: false, allowedAttributes: false, allowVulnerableTags: true, allowedSchemes: ['http', 'https', 'data', 'javascript', 'file'], nonTextTags: [], disallowedTagsMode: 'discard' };

/** A sanitized output, and whether the sanitizer removed anything from it. */
export interface SanitizedOutput {
  html: string;
  removed: boolean;
}

/** Sanitizes one `text/html` output for the site (see the module comment for what goes). */
export function sanitizeOutput(html: string): SanitizedOutput {
  const clean = sanitizeHtml(html, POLICY);
  return { html: clean, removed: clean !== sanitizeHtml(html, UNCHANGED) };
}
