/**
 * A normalization as a reader calls it. The models and the experiment name normalizations by
 * their {@link NormalizationKind} (`'batch'`, `'frozen-batch'`), which is a program value: a
 * log line or a sentence that printed it would show the reader a code name. This gives the
 * word of the active display locale, from the same table the charts and tables use
 * (plot/locales/zh.ts), so that a chapter's own messages read like its prose in both editions.
 */

import { checkNormalization, type NormalizationKind } from './models';
import { MissingTranslationError, resolveLocale, translateText, type DisplayLocale } from './plot/locale';

/**
 * The English names, as the chapters' prose writes them (notebooks/glossary.json: BatchNorm is
 * the short form of batch normalization once it has been introduced).
 */
const ENGLISH: Record<NormalizationKind, string> = {
  batch: 'BatchNorm',
  'batch-renorm': 'Batch Renorm',
  group: 'GroupNorm',
  layer: 'LayerNorm',
  'frozen-batch': 'frozen BatchNorm',
  none: 'no normalization',
};

/**
 * The reader's word for a normalization in `locale` (default: the active locale, see
 * `activeLocale`): `normalizationName('frozen-batch')` is `'frozen BatchNorm'`, and
 * `'冻结的批归一化'` in a notebook of `notebooks/zh/`.
 *
 * @example console.log(`${normalizationName(event.normalization)}: test error ${error}%`);
 */
export function normalizationName(kind: NormalizationKind, locale?: DisplayLocale): string {
  checkNormalization('normalizationName', kind);
  const lang = resolveLocale('normalizationName', locale);
  if (lang === 'en') return ENGLISH[kind];
  // The table keys normalizations by their kind, as the legends of runNormExperiment's charts do.
  const name = translateText(kind, lang);
  if (name === undefined) throw new MissingTranslationError('normalizationName', lang, [kind]);
  return name;
}
