/**
 * A figure in the reader's language: every text of a Plotly figure a reader sees (the title,
 * the axis and legend titles, the trace names, category labels, tick texts, annotations) through
 * the display locale's table (locale.ts). The translated figure records its locale in
 * `layout.meta.locale`, so that whoever draws it later, in another process (the site's
 * exporter drawing the executed notebooks), writes its text form in the same language.
 */

import { checkFigure, titleText, type PlotlyFigure, type PlotlyTrace } from './figures';
import { resolveLocale, translator, type DisplayLocale } from './locale';

/** The locale a figure was translated into (`layout.meta.locale`), `en` for any other figure. */
export function figureLocale(fig: PlotlyFigure): DisplayLocale {
  const meta = fig.layout?.meta as { locale?: unknown } | undefined;
  return meta && typeof meta === 'object' && meta.locale === 'zh' ? 'zh' : 'en';
}

/** A title as Plotly takes it (a string or `{ text, … }`) with its text replaced. */
function withTitle(title: unknown, translate: (s: string) => string): unknown {
  if (typeof title === 'string') return translate(title);
  if (title && typeof title === 'object' && typeof (title as { text?: unknown }).text === 'string') {
    return { ...(title as object), text: translate(titleText(title)) };
  }
  return title;
}

/**
 * The figure with its texts in `locale` (default: the active locale, see `activeLocale`). `en`
 * returns the figure itself. Otherwise every text that looks English must have a translation:
 * the missing ones are listed together in a `MissingTranslationError`, which names the table to
 * add them to. The input is not changed.
 *
 * @param owner The API to name in an error (`showFigure`).
 */
export function localizeFigure(fig: PlotlyFigure, locale?: DisplayLocale, owner = 'localizeFigure'): PlotlyFigure {
  checkFigure(owner, fig);
  const lang = resolveLocale(owner, locale);
  if (lang === 'en') return fig;
  const tr = translator(owner, lang);
  const layout: Record<string, unknown> = { ...fig.layout };
  layout.title = withTitle(layout.title, tr.text);
  for (const key of Object.keys(layout).filter((k) => /^[xy]axis\d*$/.test(k))) {
    const a = layout[key];
    if (!a || typeof a !== 'object') continue;
    const ax = { ...(a as Record<string, unknown>) };
    ax.title = withTitle(ax.title, tr.text);
    if (Array.isArray(ax.ticktext)) ax.ticktext = ax.ticktext.map((t) => (typeof t === 'string' ? tr.text(t) : t));
    layout[key] = ax;
  }
  if (layout.legend && typeof layout.legend === 'object') {
    const legend = { ...(layout.legend as Record<string, unknown>) };
    legend.title = withTitle(legend.title, tr.text);
    layout.legend = legend;
  }
  if (Array.isArray(layout.annotations)) {
    layout.annotations = layout.annotations.map((a: unknown) => (a && typeof a === 'object' && typeof (a as { text?: unknown }).text === 'string' ? { ...a, text: tr.text((a as { text: string }).text) } : a));
  }
  layout.meta = { ...(layout.meta && typeof layout.meta === 'object' ? (layout.meta as object) : {}), locale: lang };
  const data = fig.data.map((t): PlotlyTrace => ({
    ...t,
    ...(typeof t.name === 'string' ? { name: tr.text(t.name) } : {}),
    // Category labels are text the reader reads under the axis (bar charts of models, trainers).
    x: t.x.map((v) => (typeof v === 'string' ? tr.text(v) : v)),
  }));
  tr.check();
  return { data, layout };
}
