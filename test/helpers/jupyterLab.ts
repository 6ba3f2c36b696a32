import type { Page } from 'playwright-core';
import type { OutputJson } from '../../scripts/deno/notebooks';
import { HANG_MS } from './ceilings';

/** The MIME type of showFigure's figure JSON. */
const PLOTLY_MIME = 'application/vnd.plotly.v1+json';

// What a reader does in JupyterLab, driven through the app's own commands (the menus call the
// same ones), and what the page then shows. The lab app of lab/ exposes the application as
// `window.jupyterapp` once it has started.

/** A cell as the open notebook holds it. */
export interface LabCell {
  type: string;
  source: string;
  executionCount: number | null;
  outputs: LabOutput[];
}

/** An nbformat output; errors carry their name and message. */
export type LabOutput = OutputJson & { ename?: string; evalue?: string };

/** The open notebook: its kernel, cells, and whether JupyterLab thinks it has unsaved changes. */
export interface LabNotebook {
  path: string;
  kernel: string | undefined;
  dirty: boolean;
  cells: LabCell[];
}

/** One drawn figure: whether plotly.js drew an SVG with traces, at what size. */
export interface DrawnFigure {
  traces: number;
  width: number;
  height: number;
}

/**
 * Loads JupyterLab in `page` with no document, in its own workspace, and waits until the app
 * has restored; notebooks are then opened in it one after another with {@link openInPage}, as a
 * reader opens them from the file browser. (A page load costs 4–5 s of the JupyterLab test's
 * 13 s overhead per notebook, measured; the kernel's start is most of the rest.)
 */
export async function loadLab(page: Page, args: { base: string; token: string; workspace: string; timeoutMs?: number }): Promise<void> {
  await page.goto(`${args.base}/lab/workspaces/${args.workspace}?token=${args.token}`);
  await page.waitForFunction(() => (window as any).jupyterapp?.commands?.hasCommand('docmanager:open'), null, { timeout: args.timeoutMs ?? HANG_MS, polling: 250 });
  await page.evaluate(() => (window as any).jupyterapp.restored);
}

/**
 * File → Open of `file` in a page that {@link loadLab} loaded; waits for the notebook and, when
 * `kernel` is true, for its kernel. With `kernel` false no kernel is started (a reopened
 * notebook is only looked at).
 */
export async function openInPage(page: Page, args: { file: string; kernel: boolean; timeoutMs?: number }): Promise<void> {
  await page.evaluate(({ file, kernel }) => (window as any).jupyterapp.commands.execute('docmanager:open', { path: file, factory: 'Notebook', kernelPreference: { shouldStart: kernel } }), args);
  await page.waitForFunction(
    ({ file, kernel }) => {
      const panel = (window as any).jupyterapp?.shell?.currentWidget;
      if (panel?.context?.path !== file || !panel.context.isReady || !panel.content?.widgets?.length) return false;
      return !kernel || panel.sessionContext?.session?.kernel?.connectionStatus === 'connected';
    },
    args,
    { timeout: args.timeoutMs ?? HANG_MS, polling: 250 },
  );
}

/**
 * Kernel → Shut Down Kernel, then closes every tab of `file` without asking (the caller saved
 * it, or only looked at it). Shut down through the page, the kernel's connection knows it is
 * gone; shut down behind the page's back, the page tries to reconnect and logs a 404.
 */
export async function closeInPage(page: Page, file: string): Promise<void> {
  await page.evaluate(async (path) => {
    for (const w of Array.from((window as any).jupyterapp.shell.widgets('main')) as any[]) {
      if (w.context?.path !== path) continue;
      if (w.sessionContext?.session) await w.sessionContext.shutdown();
      w.dispose();
    }
  }, file);
}

/** Run → Run All Cells, resolved once every queued cell has finished (or one failed and stopped the rest). */
export async function runAll(page: Page, timeoutMs: number): Promise<void> {
  await page.evaluate(() => {
    const w = window as any;
    w.__ranAll = undefined;
    w.jupyterapp.commands.execute('notebook:run-all-cells').then(
      () => (w.__ranAll = true),
      () => (w.__ranAll = true),
    );
  });
  await page.waitForFunction(
    () => {
      const w = window as any;
      const panel = w.jupyterapp.shell.currentWidget;
      const busy = !w.__ranAll || panel.sessionContext.session?.kernel?.status !== 'idle' || panel.node.querySelector('.jp-InputArea-prompt')?.textContent?.includes('*');
      w.__idleChecks = busy ? 0 : (w.__idleChecks ?? 0) + 1;
      return w.__idleChecks >= 3;
    },
    null,
    { timeout: timeoutMs, polling: 500 },
  );
}

/** The open notebook's cells and outputs as JupyterLab holds them. */
export function readOpenNotebook(page: Page): Promise<LabNotebook> {
  return page.evaluate(() => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    return {
      path: panel.context.path,
      kernel: panel.sessionContext.session?.kernel?.name,
      dirty: panel.context.model.dirty,
      cells: panel.content.widgets.map((cell: any) => ({
        type: cell.model.type,
        source: cell.model.sharedModel.getSource(),
        executionCount: cell.model.type === 'code' ? cell.model.executionCount : null,
        outputs: cell.model.type === 'code' ? cell.model.outputs.toJSON() : [],
      })),
    };
  });
}

/**
 * Scrolls to each cell with a Plotly output, as a reader would (JupyterLab renders and paints
 * only the cells near the viewport), and reports what plotly.js drew for each such output.
 */
export function drawnFigures(page: Page): Promise<DrawnFigure[]> {
  return page.evaluate(async (mime) => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    const found: DrawnFigure[] = [];
    for (const cell of panel.content.widgets) {
      const expected = cell.model.type === 'code' ? cell.model.outputs.toJSON().filter((o: any) => o.data?.[mime] !== undefined).length : 0;
      if (expected === 0) continue;
      await panel.content.scrollToCell(cell, 'center');
      let nodes: HTMLElement[] = [];
      for (let i = 0; i < 60; i++) {
        nodes = Array.from(cell.node.querySelectorAll('.tfjs-accumulate-plotly')) as HTMLElement[];
        if (nodes.length === expected && nodes.every((n) => (n.querySelector('svg.main-svg')?.getBoundingClientRect().width ?? 0) > 0)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      for (let k = 0; k < expected; k++) {
        const box = nodes[k]?.querySelector('svg.main-svg')?.getBoundingClientRect();
        found.push({ traces: nodes[k]?.querySelectorAll('.trace').length ?? 0, width: box?.width ?? 0, height: box?.height ?? 0 });
      }
    }
    return found;
  }, PLOTLY_MIME);
}

/** How many showTable tables the open notebook renders, scrolling to each cell that has one. */
export function renderedTables(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    let tables = 0;
    for (const cell of panel.content.widgets) {
      const expected = cell.model.type === 'code' ? cell.model.outputs.toJSON().filter((o: any) => String(o.data?.['text/html'] ?? '').includes('tfjs-accumulate-table')).length : 0;
      if (expected === 0) continue;
      await panel.content.scrollToCell(cell, 'center');
      let n = 0;
      for (let i = 0; i < 60 && n < expected; i++) {
        n = cell.node.querySelectorAll('.jp-OutputArea-output table.tfjs-accumulate-table').length;
        if (n < expected) await new Promise((r) => setTimeout(r, 50));
      }
      tables += n;
    }
    return tables;
  });
}

/** File → Save, resolved once JupyterLab holds no unsaved change. */
export async function save(page: Page): Promise<void> {
  await page.evaluate(() => (window as any).jupyterapp.commands.execute('docmanager:save'));
  await page.waitForFunction(() => !(window as any).jupyterapp.shell.currentWidget.context.model.dirty, null, { timeout: HANG_MS, polling: 250 });
}

/** Errors and stderr among outputs, the way a reader sees them: the text, cut to 500 characters. */
export function errorOutputs(cells: LabCell[]): string[] {
  return cells.flatMap((c) =>
    c.outputs
      .filter((o) => o.output_type === 'error' || (o.output_type === 'stream' && o.name === 'stderr'))
      .map((o) => (o.output_type === 'error' ? `${o.ename}: ${o.evalue}` : [o.text].flat().join('')).slice(0, 500)),
  );
}

/** How often the code of the cells calls `name(`, e.g. showFigure. */
export function calls(cells: LabCell[], name: string): number {
  return cells.filter((c) => c.type === 'code').reduce((n, c) => n + (c.source.match(new RegExp(`\\b${name}\\(`, 'g')) ?? []).length, 0);
}
