/**
 * The display locale: which language the `show*` helpers write a notebook's outputs in, and the
 * translation of the texts they show (chart and axis titles, legends, table headers).
 *
 * The Chinese edition runs the English programs (see docs/translation.md), so a figure built by
 * the library (`runNormExperiment`'s charts) or a table whose header is a one-word identifier
 * (`{ model, expected }`) would reach a Chinese reader in English. The display layer translates
 * such texts on the way out, from one table per locale (locales/zh.ts), so that no cell has to.
 * A text the table lacks fails the cell, naming the text and the table: a Chinese page never
 * shows English silently.
 */

import { argumentError } from '../../core/errors';
import { ZH_TEXTS } from './locales/zh';

/** The languages the display layer writes. `en` shows every text as given. */
export type DisplayLocale = 'en' | 'zh';

/** Every locale {@link setLocale} accepts. */
export const DISPLAY_LOCALES: readonly DisplayLocale[] = ['en', 'zh'];

/** The environment variable that chooses the locale for a whole process (`zh` or `en`). */
export const LOCALE_ENV = 'TFJS_ACCUMULATE_LOCALE';

/** English text → the locale's text; see locales/zh.ts for the rules of an entry. */
const TABLES: Record<Exclude<DisplayLocale, 'en'>, Readonly<Record<string, string>>> = { zh: ZH_TEXTS };

let chosen: DisplayLocale | undefined;

const isLocale = (v: unknown): v is DisplayLocale => typeof v === 'string' && (DISPLAY_LOCALES as readonly string[]).includes(v);

/**
 * Chooses the locale of every later output of this process, or with `undefined` goes back to
 * choosing it automatically (see {@link activeLocale}). Returns the locale chosen before, so
 * that a caller can restore it.
 *
 * @example setLocale('zh'); await showTable(rows); // headers in Chinese
 */
export function setLocale(locale: DisplayLocale | undefined): DisplayLocale | undefined {
  if (locale !== undefined && !isLocale(locale)) throw argumentError('setLocale', 'locale', `one of ${DISPLAY_LOCALES.map((l) => `"${l}"`).join(', ')}, or undefined for automatic`, locale);
  const before = chosen;
  chosen = locale;
  return before;
}

/** The process's environment and working directory, where the runtime exposes them (not in a browser). */
function host(): { env: (name: string) => string | undefined; cwd: () => string | undefined } {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined>; cwd?: () => string } }).process;
  const deno = (globalThis as { Deno?: { env?: { get(name: string): string | undefined }; cwd?: () => string } }).Deno;
  // Deno without --allow-env or --allow-read throws on these; the locale then stays automatic.
  const attempt = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch {
      return undefined;
    }
  };
  return {
    env: (name) => attempt(() => proc?.env?.[name] ?? deno?.env?.get(name)),
    cwd: () => attempt(() => proc?.cwd?.() ?? deno?.cwd?.()),
  };
}

/**
 * The locale outputs are written in: the one given to {@link setLocale}; else the environment
 * variable `TFJS_ACCUMULATE_LOCALE`; else `zh` when the working directory is a folder named `zh`;
 * else `en`.
 *
 * The folder rule is what makes the Chinese edition Chinese without a line of its own: every
 * way of running a notebook starts its kernel in the notebook's folder (Jupyter Server for
 * JupyterLab and classic Notebook, `jupyter nbconvert --execute`, `npm run notebooks`), and the
 * Chinese notebooks live in `notebooks/zh/`.
 */
export function activeLocale(): DisplayLocale {
  if (chosen) return chosen;
  const { env, cwd } = host();
  const fromEnv = env(LOCALE_ENV);
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!isLocale(fromEnv)) throw argumentError('activeLocale', LOCALE_ENV, `one of ${DISPLAY_LOCALES.map((l) => `"${l}"`).join(', ')}`, fromEnv);
    return fromEnv;
  }
  const dir = cwd();
  const folder = dir?.split(/[\\/]/).filter(Boolean).pop();
  return isLocale(folder) ? folder : 'en';
}

/** True for a text a reader would take for English: some Latin word and no Chinese character. */
export function looksEnglish(text: string): boolean {
  return /[A-Za-z]{2,}/.test(text) && !/[\u3400-\u9fff\uf900-\ufaff]/.test(text);
}

/** The pattern of a template entry (`${}` stands for any text), compiled once. */
const templates = new Map<string, { pattern: RegExp; literal: number }>();
function template(key: string): { pattern: RegExp; literal: number } {
  let t = templates.get(key);
  if (!t) {
    const parts = key.split('${}');
    const pattern = new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('(.+?)')}$`, 's');
    t = { pattern, literal: parts.join('').length };
    templates.set(key, t);
  }
  return t;
}

/**
 * The translation of one text into `locale`, or undefined when its table has none. `en` returns
 * the text. A table entry is either the exact text or a template whose `${}` stand for any text
 * (`'microBatchSize ${}'`); each value filled in is itself translated when the table knows it.
 * When several templates match, the one with the most fixed text wins.
 */
export function translateText(text: string, locale: DisplayLocale): string | undefined {
  if (locale === 'en') return text;
  const table = TABLES[locale];
  if (Object.prototype.hasOwnProperty.call(table, text)) return table[text];
  let best: { key: string; values: string[]; literal: number } | undefined;
  for (const key of Object.keys(table)) {
    if (!key.includes('${}')) continue;
    const t = template(key);
    const m = t.pattern.exec(text);
    if (m && (!best || t.literal > best.literal)) best = { key, values: m.slice(1), literal: t.literal };
  }
  if (!best) return undefined;
  const values = best.values.map((v) => translateText(v, locale) ?? v);
  let i = 0;
  return table[best.key].replace(/\$\{\}/g, () => values[i++] ?? '');
}

/** Raised in a non-English locale for texts that look English and have no translation. */
export class MissingTranslationError extends Error {
  constructor(
    readonly owner: string,
    readonly locale: DisplayLocale,
    readonly texts: string[],
  ) {
    super(
      `${owner}: no ${locale} translation for ${texts.map((t) => JSON.stringify(t)).join(', ')}. ` +
        `Add each to src/tutorial/plot/locales/${locale}.ts (an entry that maps a text to itself keeps it as it is, ` +
        'for a name such as "CNN"), then `npm run build`.',
    );
    this.name = 'MissingTranslationError';
  }
}

/**
 * A translator for one output: `text(s)` returns the translation of a text the reader must be
 * able to read (a title, a header), and records it as missing when the table has none and it
 * looks English; `value(s)` translates a table cell when the table knows it and otherwise keeps
 * it (a cell may be an identifier such as `'per-sample'`). `check()` throws
 * {@link MissingTranslationError} listing every missing text at once.
 */
export function translator(owner: string, locale: DisplayLocale): { text(s: string): string; value(s: string): string; check(): void } {
  const missing = new Set<string>();
  return {
    text(s) {
      const t = translateText(s, locale);
      if (t !== undefined) return t;
      if (looksEnglish(s)) missing.add(s);
      return s;
    },
    value: (s) => translateText(s, locale) ?? s,
    check() {
      if (missing.size > 0) throw new MissingTranslationError(owner, locale, [...missing]);
    },
  };
}

/** Checks a `locale` argument: a {@link DisplayLocale}, or undefined for {@link activeLocale}. */
export function resolveLocale(owner: string, locale: unknown): DisplayLocale {
  if (locale === undefined) return activeLocale();
  if (!isLocale(locale)) throw argumentError(owner, 'locale', `one of ${DISPLAY_LOCALES.map((l) => `"${l}"`).join(', ')}, or left out for the active locale`, locale);
  return locale;
}
