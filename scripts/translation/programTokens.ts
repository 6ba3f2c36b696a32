/**
 * A notebook code cell as the TypeScript scanner sees it, split into what makes the program
 * (keywords, names, operators, numbers, the shape of every string and template) and what a
 * translation may change (comments, and the text inside string and template literals).
 *
 * Two cells run "the same program" when their program tokens are equal. This is what ties a
 * Chinese notebook to its English twin (test/scripts/translation/programTokens.test.ts), and
 * what scripts/translation/syncNotebooks.ts uses to pair cells and rewrite their text.
 */
import * as ts from 'typescript';

/** One token of a code cell, with where it sits in the source. */
export interface Token {
  kind: 'code' | 'string' | 'template' | 'comment';
  /** Source text of the token, delimiters included. */
  text: string;
  start: number;
  end: number;
  /**
   * For `string` and `template`: the literal's text between its delimiters, as written in the
   * source (escapes kept). For `comment`: the comment without `//` or `/* *\/`, trimmed.
   */
  content?: string;
  /** For `template` parts: which template literal this part belongs to (nested ones count). */
  literal?: number;
  /** For `comment`: whether code precedes it on the same line (a trailing comment). */
  trailing?: boolean;
}

/** Tokens after which a `/` starts a regular expression rather than a division. */
const ENDS_AN_OPERAND = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.CloseBraceToken,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.SuperKeyword,
  ts.SyntaxKind.TrueKeyword,
  ts.SyntaxKind.FalseKeyword,
  ts.SyntaxKind.NullKeyword,
  ts.SyntaxKind.RegularExpressionLiteral,
  ts.SyntaxKind.PlusPlusToken,
  ts.SyntaxKind.MinusMinusToken,
]);

/** Splits TypeScript source into tokens; whitespace and line breaks are dropped. */
export function tokenize(code: string): Token[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, code);
  const tokens: Token[] = [];
  // One entry per open template literal: its id and the braces opened inside its current `${`.
  const templates: { id: number; depth: number }[] = [];
  let nextTemplate = 0;
  let previous: ts.SyntaxKind | undefined;
  let lineHasCode = false;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.NewLineTrivia) {
      lineHasCode = false;
      continue;
    }
    if (kind === ts.SyntaxKind.WhitespaceTrivia || kind === ts.SyntaxKind.ShebangTrivia || kind === ts.SyntaxKind.ConflictMarkerTrivia) continue;
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      const text = scanner.getTokenText();
      const inner = kind === ts.SyntaxKind.SingleLineCommentTrivia ? text.slice(2) : text.slice(2, -2);
      tokens.push({ kind: 'comment', text, start: scanner.getTokenStart(), end: scanner.getTokenEnd(), content: inner.trim(), trailing: lineHasCode });
      if (text.includes('\n')) lineHasCode = false;
      continue;
    }
    if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && (previous === undefined || !ENDS_AN_OPERAND.has(previous))) {
      kind = scanner.reScanSlashToken();
    }
    const top = templates[templates.length - 1];
    if (kind === ts.SyntaxKind.OpenBraceToken && top) top.depth++;
    if (kind === ts.SyntaxKind.CloseBraceToken && top) {
      if (top.depth === 0) kind = scanner.reScanTemplateToken(false);
      else top.depth--;
    }
    lineHasCode = true;
    previous = kind;
    const start = scanner.getTokenStart();
    const end = scanner.getTokenEnd();
    const text = code.slice(start, end);
    switch (kind) {
      case ts.SyntaxKind.StringLiteral:
        tokens.push({ kind: 'string', text, start, end, content: text.slice(1, -1) });
        break;
      case ts.SyntaxKind.NoSubstitutionTemplateLiteral:
        tokens.push({ kind: 'template', text, start, end, content: text.slice(1, -1), literal: nextTemplate++ });
        break;
      case ts.SyntaxKind.TemplateHead:
        templates.push({ id: nextTemplate++, depth: 0 });
        tokens.push({ kind: 'template', text, start, end, content: text.slice(1, -2), literal: templates[templates.length - 1].id });
        break;
      case ts.SyntaxKind.TemplateMiddle:
        tokens.push({ kind: 'template', text, start, end, content: text.slice(1, -2), literal: top!.id });
        break;
      case ts.SyntaxKind.TemplateTail:
        tokens.push({ kind: 'template', text, start, end, content: text.slice(1, -1), literal: top!.id });
        templates.pop();
        break;
      default:
        tokens.push({ kind: 'code', text, start, end });
    }
  }
  return tokens;
}

/**
 * The program a cell runs, as a list of token texts: comments left out, and every string or
 * template part reduced to its kind and delimiters, so that only translatable text is set aside.
 */
export function programTokens(code: string): string[] {
  return tokenize(code)
    .filter((t) => t.kind !== 'comment')
    .map(shapeOf);
}

/** A token's text with the text of a string or template part replaced by `…`. */
function shapeOf(t: Token): string {
  if (t.kind === 'string') return `${t.text[0]}…${t.text[0]}`;
  if (t.kind === 'template') return `${t.text[0]}…${t.text.endsWith('${') ? '${' : t.text[t.text.length - 1]}`;
  return t.text;
}

/**
 * A string literal whose text is one word of printable ASCII (`'batch'`, `'per-sample'`,
 * `'\n'`) is a value the program uses (a key, an option, a separator), not a message: it must
 * stay the same in every edition. Literals with a space or with non-ASCII text may be translated.
 */
export function isProgramValue(content: string): boolean {
  return /^[\x21-\x7e]*$/.test(content);
}

/** Where two cells stop running the same program, or undefined when they do not. */
export function programDifference(english: string, translated: string): string | undefined {
  const a = tokenize(english).filter((t) => t.kind !== 'comment');
  const b = tokenize(translated).filter((t) => t.kind !== 'comment');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    const context = (tokens: Token[]) => tokens.slice(Math.max(0, i - 3), i + 4).map((t) => t.text).join(' ');
    if (!x || !y) {
      return `the ${x ? 'translation' : 'English cell'} ends early, at token ${i + 1}: English "${context(a)}", translation "${context(b)}"`;
    }
    const sameShape = x.kind === y.kind && shapeOf(x) === shapeOf(y);
    const valueChanged = x.kind === 'string' && y.kind === 'string' && isProgramValue(x.content!) && x.content !== y.content;
    if (!sameShape || valueChanged) {
      const why = valueChanged ? ` (the string ${x.text} is a program value, not a message, and may not be translated)` : '';
      return `token ${i + 1} differs${why}: English "${context(a)}", translation "${context(b)}"`;
    }
  }
  return undefined;
}
