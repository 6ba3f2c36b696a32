/**
 * Plotting and display for notebooks: figure specs (figures.ts), their text (text.ts) and static
 * SVG (svg.ts) forms, display bundles for figures (display.ts) and tables (table.ts), and the
 * kernel writer they share (kernel.ts).
 */
export { lineChart, barChart, baseLayout, PALETTE, DEFAULT_FIGURE_SIZE } from './figures';
export type { PlotlyFigure, PlotlyTrace, Series, LineChartArgs, BarChartArgs } from './figures';
export { PLOTLY_MIME, figureBundle, showFigure } from './display';
export type { DisplayBundle } from './display';
export { figureText } from './text';
export { figureSvg } from './svg';
export { tableBundle, showTable } from './table';
export type { TableRow, TableArgs, TableBundle } from './table';
