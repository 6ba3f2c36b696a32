/**
 * The way out of a notebook cell: tslab's kernel writer for `display_data` messages, shared by
 * every `show*` helper.
 */

/** The function tslab's kernel hands each cell to publish display data (`display_data` messages). */
export type WriteDisplayData = (content: { data: Record<string, unknown>; metadata: Record<string, unknown>; transient: Record<string, unknown> }, update?: boolean) => void;

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

/** The writer, or an error naming the helper and what to use outside a kernel. */
export function requireKernelWriter(owner: string, alternative: string): WriteDisplayData {
  const write = kernelDisplayWriter();
  if (!write) {
    throw new Error(
      `${owner}: no tslab kernel is running in this process. ${owner} only works in a notebook cell run by the ` +
        'tslab kernel (JupyterLab, classic Notebook, jupyter nbconvert) or by `npm run notebooks`; elsewhere use ' +
        `${alternative}.`,
    );
  }
  return write;
}
