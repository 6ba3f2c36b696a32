import { loadNativeBlas, NativeAddon } from '../../src/backend/kernels/nativeBlas';

/**
 * Runs `fn` with the native addon wrapped so that its products are counted: proof that a
 * parity test ran the native kernels rather than a fallback. Restores the real addon after.
 */
export async function countingNativeCalls(fn: () => Promise<void>): Promise<number> {
  const real = loadNativeBlas();
  if (!real.available) throw new Error(`countingNativeCalls: the native addon ${real.reason}`);
  let calls = 0;
  const counting: NativeAddon = {
    sgemm: (...args: Parameters<NativeAddon['sgemm']>) => {
      calls++;
      real.addon.sgemm(...args);
    },
    im2col: (...args: Parameters<NativeAddon['im2col']>) => real.addon.im2col(...args),
    col2im: (...args: Parameters<NativeAddon['col2im']>) => real.addon.col2im(...args),
    info: () => real.addon.info(),
    setThreads: (n) => real.addon.setThreads(n),
  };
  loadNativeBlas({ reload: true, load: () => counting });
  try {
    await fn();
  } finally {
    loadNativeBlas({ reload: true });
  }
  return calls;
}
