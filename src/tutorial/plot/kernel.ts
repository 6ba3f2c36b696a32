/**
 * The way out of a notebook cell, shared by every `show*` helper: tslab's kernel writer for
 * `display_data` messages, or Deno's `Deno.jupyter.display` in Deno's Jupyter kernel.
 */

/** The function tslab's kernel hands each cell to publish display data (`display_data` messages). */
export type WriteDisplayData = (content: { data: Record<string, unknown>; metadata: Record<string, unknown>; transient: Record<string, unknown> }, update?: boolean) => void;

/**
 * Publishes one display bundle as an output of the current cell. The promise resolves once the
 * kernel has taken the output: at once under tslab, after Deno's `display` under Deno. Awaiting
 * it (`await showFigure(fig)`) keeps the output in the cell that made it.
 */
export type PublishDisplay = (bundle: { data: Record<string, unknown>; metadata: Record<string, unknown> }) => Promise<void>;

/** The part of Deno's `Deno.jupyter` namespace used here. */
interface DenoJupyter {
  display(obj: unknown, options: { raw: boolean }): Promise<void>;
}

/**
 * Finds tslab's `lastWriteDisplayData`, which the kernel sets before each cell. `display.raw`
 * in tslab's public API can only send one MIME type as a string, so the bundle goes through the
 * kernel's own writer. The library and the kernel may load different copies of tslab (a global
 * tslab, or this package installed elsewhere), so every loaded copy is asked, not just the one
 * `require('tslab')` would resolve from here.
 */
export function kernelDisplayWriter(): WriteDisplayData | undefined {
  const cache: Record<string, NodeModule | undefined> = typeof require === 'function' && require.cache ? require.cache : {};
  for (const [file, mod] of Object.entries(cache)) {
    if (!/[\\/]tslab[\\/]dist[\\/]jupyter\.js$/.test(file)) continue;
    const write = (mod?.exports as { lastWriteDisplayData?: unknown } | undefined)?.lastWriteDisplayData;
    if (typeof write === 'function') return write as WriteDisplayData;
  }
  return undefined;
}

/**
 * `Deno.jupyter` when this code runs in a cell of Deno's Jupyter kernel, else undefined. Outside
 * the kernel (`deno run`) reading `Deno.jupyter` throws, hence the try.
 */
export function denoJupyter(): DenoJupyter | undefined {
  const deno = (globalThis as { Deno?: { jupyter?: unknown } }).Deno;
  if (deno === undefined) return undefined;
  try {
    const jupyter = deno.jupyter as Partial<DenoJupyter> | undefined;
    return typeof jupyter?.display === 'function' ? (jupyter as DenoJupyter) : undefined;
  } catch {
    return undefined;
  }
}

/** The current kernel's way to publish a display bundle, or undefined outside a kernel. */
export function kernelPublisher(): PublishDisplay | undefined {
  const write = kernelDisplayWriter();
  if (write) {
    return (bundle) => {
      write({ data: bundle.data, metadata: bundle.metadata, transient: {} });
      return Promise.resolve();
    };
  }
  const jupyter = denoJupyter();
  // Note: Deno's display sends `metadata: {}`; the bundles of this library carry none.
  if (jupyter) return (bundle) => jupyter.display(bundle.data, { raw: true });
  return undefined;
}

/** The publisher, or an error naming the helper and what to use outside a kernel. */
export function requireKernelPublisher(owner: string, alternative: string): PublishDisplay {
  const publish = kernelPublisher();
  if (!publish) {
    throw new Error(
      `${owner}: no notebook kernel (tslab or Deno) is running in this process. ${owner} only works in a notebook cell ` +
        'run by the tslab or Deno kernel (JupyterLab, classic Notebook, jupyter nbconvert) or by `npm run notebooks`; ' +
        `elsewhere use ${alternative}.`,
    );
  }
  return publish;
}
