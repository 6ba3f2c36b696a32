/**
 * ASCII spaces after Chinese punctuation in the outputs of an executed Chinese notebook: the
 * sentences a chapter builds from its run (`showMarkdown`, `check`, log lines, table cells).
 * Chinese puts no space after 。 or ，; a space there comes from an English-style join
 * (`sentences.join(' ')`) and shows as a gap in the paragraph. Prose and table entries are
 * checked where they are written (test/scripts/translation/outputSpacing.test.ts); this reads
 * what the run printed, in the executed copies (build/notebooks/zh/, from `npm run notebooks`).
 *
 *   node --import tsx scripts/translation/outputSpacing.ts [build/notebooks/zh]
 */
import { spacesAfterChinesePunctuation } from '../../src/tutorial/index';
import { checkExecutedNotebooks, type NotebookJson } from './outputLanguage';

/** One space after Chinese punctuation in an output. */
export interface SpacingProblem {
  /** 1-based position of the code cell among all cells. */
  cell: number;
  /** The output's MIME type, or `stream` for printed text. */
  where: string;
  /** The text around the space. */
  excerpt: string;
}

const joined = (v: unknown): string | undefined => (typeof v === 'string' ? v : Array.isArray(v) ? v.join('') : undefined);

/** The texts a reader reads in the notebook's outputs (HTML without its tags), each with its kind. */
function outputTexts(output: { text?: string | string[]; data?: Record<string, unknown> }): [string, string][] {
  const texts: [string, string][] = [];
  const stream = joined(output.text);
  if (stream !== undefined) texts.push(['stream', stream]);
  for (const mime of ['text/markdown', 'text/plain', 'text/html']) {
    const text = joined(output.data?.[mime]);
    // Tags are replaced by a newline, not a space: `</td><td>` is a cell border, not a gap.
    if (text !== undefined) texts.push([mime, mime === 'text/html' ? text.replace(/<[^>]*>/g, '\n') : text]);
  }
  return texts;
}

/** Every ASCII space right after Chinese punctuation in the notebook's outputs. */
export function spacingInOutputs(notebook: NotebookJson): SpacingProblem[] {
  const found: SpacingProblem[] = [];
  notebook.cells.forEach((cell, i) => {
    for (const output of cell.outputs ?? []) {
      for (const [where, text] of outputTexts(output)) {
        for (const excerpt of spacesAfterChinesePunctuation(text)) found.push({ cell: i + 1, where, excerpt });
      }
    }
  });
  return found;
}

if (require.main === module) {
  checkExecutedNotebooks((nb) => spacingInOutputs(nb).map((p) => ({ cell: p.cell, where: p.where, text: p.excerpt })), ['space after Chinese punctuation', 'spaces after Chinese punctuation']);
}
