/**
 * Plotting and display for notebooks: figure specs (figures.ts), their text (text.ts) and static
 * SVG (svg.ts) forms, display bundles for figures (display.ts) and tables (table.ts), the
 * kernel writer they share (kernel.ts), the display locale and its tables (locale.ts,
 * localize.ts, locales/), numbers for readers (format.ts), and sentences joined the way their
 * language writes them (sentences.ts).
 */
export { lineChart, barChart, baseLayout, dataTicks, PALETTE, DEFAULT_FIGURE_SIZE, FONT_FAMILY, FONT_SIZE, TITLE_FONT_SIZE, TEXT_COLOR } from './figures';
export type { PlotlyFigure, PlotlyTrace, Series, LineChartArgs, BarChartArgs } from './figures';
export { PLOTLY_MIME, figureBundle, showFigure } from './display';
export type { DisplayBundle, FigureArgs } from './display';
export { figureText, figureTextLabel, figureAriaLabel } from './text';
export { formatNumber } from './format';
export { joinSentences, spacesAfterChinesePunctuation } from './sentences';
export type { FormatNumberArgs } from './format';
export { setLocale, activeLocale, translateText, looksEnglish, MissingTranslationError, DISPLAY_LOCALES, LOCALE_ENV } from './locale';
export type { DisplayLocale } from './locale';
export { localizeFigure, figureLocale } from './localize';
export { figureSvg } from './svg';
export { tableBundle, showTable } from './table';
export type { TableRow, TableArgs, TableBundle } from './table';
