/**
 * The tutorial's glossary (`notebooks/glossary.json`): one English and one Chinese term per
 * concept, and the spellings no notebook may use. This file reads it, finds the spellings to
 * avoid in a text, and renders the bilingual page `docs/glossary.md`.
 *
 *   npm run glossary [-- --check]     # write docs/glossary.md, or fail when it is out of date
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One concept of the glossary. */
export interface GlossaryTerm {
  /** The English term, as the English notebooks write it. */
  en: string;
  /** The Chinese term, as the Chinese notebooks write it. */
  zh: string;
  /** The library's name for it, when it has one (`microBatchSize`). */
  code?: string;
  /** Spellings not to use: Chinese ones in the Chinese notebooks, Latin ones in either edition's prose. */
  avoid: string[];
  /** What the term covers, or how to write it, in Chinese. */
  note?: string;
}

export interface Glossary {
  about: string;
  terms: GlossaryTerm[];
}

const ROOT = path.resolve(__dirname, '..', '..');
export const GLOSSARY_FILE = path.join(ROOT, 'notebooks', 'glossary.json');
export const GLOSSARY_PAGE = path.join(ROOT, 'docs', 'glossary.md');

export function loadGlossary(file = GLOSSARY_FILE): Glossary {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Glossary;
}

/** Whether a spelling is written in Latin letters (checked in prose only, as whole words). */
const isLatin = (s: string) => /^[\x20-\x7e]+$/.test(s);

/** One place where a text uses a spelling the glossary rules out. */
export interface GlossaryViolation {
  found: string;
  use: string;
  /** The text around it. */
  context: string;
}

/**
 * The glossary's ruled-out spellings found in `text`. `script` says which ones to look for:
 * the Chinese ones (`'zh'`, anywhere in the text) or the Latin ones (`'en'`, case-insensitive,
 * as whole words, so pass prose with code spans removed, see `proseOf`).
 */
export function glossaryViolations(text: string, glossary: Glossary, script: 'zh' | 'en'): GlossaryViolation[] {
  const found: GlossaryViolation[] = [];
  for (const term of glossary.terms) {
    for (const avoid of term.avoid.filter((a) => isLatin(a) === (script === 'en'))) {
      const pattern = script === 'en' ? new RegExp(`\\b${avoid.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'gi') : new RegExp(avoid.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g');
      for (const m of text.matchAll(pattern)) {
        const at = m.index ?? 0;
        found.push({ found: m[0], use: script === 'en' ? term.en : term.zh, context: text.slice(Math.max(0, at - 15), at + m[0].length + 15).replace(/\s+/g, ' ') });
      }
    }
  }
  return found;
}

/** Markdown prose without code blocks, inline code and math, where identifiers would match. */
export function proseOf(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/`[^`]*`/g, ' ')
    .replace(/\$\$[\s\S]*?\$\$/g, ' ')
    .replace(/\$[^$\n]*\$/g, ' ');
}

/**
 * Mistakes in the glossary itself: a term listed twice, or a ruled-out spelling that is part of
 * a term to use (it would forbid the term).
 */
export function glossaryProblems(glossary: Glossary): string[] {
  const problems: string[] = [];
  const seen = { en: new Set<string>(), zh: new Set<string>() };
  for (const term of glossary.terms) {
    for (const lang of ['en', 'zh'] as const) {
      if (seen[lang].has(term[lang])) problems.push(`"${term[lang]}" is listed twice`);
      seen[lang].add(term[lang]);
    }
    if (term.avoid.includes(term.zh) || term.avoid.includes(term.en)) problems.push(`${term.en}: avoids its own term`);
  }
  for (const term of glossary.terms) {
    for (const avoid of term.avoid) {
      const clash = glossary.terms.find((t) => (isLatin(avoid) ? new RegExp(`\\b${avoid}\\b`, 'i').test(t.en) : t.zh.includes(avoid)));
      if (clash) problems.push(`${term.en}: avoiding "${avoid}" would forbid the term "${isLatin(avoid) ? clash.en : clash.zh}"`);
    }
  }
  return problems;
}

/** The bilingual page docs/glossary.md. */
export function renderGlossary(glossary: Glossary): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = glossary.terms.map((t) =>
    [t.en, t.zh, t.code ? `\`${t.code}\`` : '', t.avoid.map((a) => cell(a)).join('、'), cell(t.note ?? '')].join(' | '),
  );
  return [
    '# Glossary · 术语表',
    '',
    '<!-- Generated from notebooks/glossary.json by `npm run glossary`; edit the JSON, not this page. -->',
    '',
    'The terms both editions of the tutorial use, in English and in Chinese. The Chinese notebooks',
    'in `notebooks/zh/` may not use a spelling from the last column; the unit tests check it',
    '(`test/scripts/translation/glossary.test.ts`).',
    '',
    '教程中英文两版共用的术语。`notebooks/zh/` 中的中文笔记本不得使用最后一列“不用”里的写法，',
    '单元测试会逐一检查。',
    '',
    '| English | 中文 | code | 不用 (avoid) | 说明 |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r} |`),
    '',
  ].join('\n');
}

if (require.main === module) {
  const page = renderGlossary(loadGlossary());
  const problems = glossaryProblems(loadGlossary());
  if (problems.length) {
    console.error(`notebooks/glossary.json:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(GLOSSARY_PAGE) ? fs.readFileSync(GLOSSARY_PAGE, 'utf8') : '';
    if (current !== page) {
      console.error('docs/glossary.md is out of date: run `npm run glossary`.');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(GLOSSARY_PAGE, page);
    console.log(`wrote ${path.relative(ROOT, GLOSSARY_PAGE)} (${loadGlossary().terms.length} terms)`);
  }
}
