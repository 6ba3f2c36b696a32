import { loadNativeBlas, NativeAddon } from '../../src/backend/kernels/nativeBlas';

/** The addon's kernel functions a spy can count. */
export type NativeFunction = 'sgemm' | 'im2col' | 'col2im' | 'channelSums' | 'channelBinary';

/**
 * Runs `fn` with the native addon wrapped so that calls of the functions in `counted` (default:
 * the products) are counted: proof that a parity test ran the native kernels rather than a
 * fallback. Restores the real addon after.
 */
export async function countingNativeCalls(fn: () => Promise<void>, counted: readonly NativeFunction[] = ['sgemm']): Promise<number> {
  const real = loadNativeBlas();
  if (!real.available) throw new Error(`countingNativeCalls: the native addon ${real.reason}`);
  const addon = real.addon;
  let calls = 0;
  const count = (name: NativeFunction) => {
    if (counted.includes(name)) calls++;
  };
  const counting: NativeAddon = {
    sgemm: (...args: Parameters<NativeAddon['sgemm']>) => (count('sgemm'), addon.sgemm(...args)),
    im2col: (...args: Parameters<NativeAddon['im2col']>) => (count('im2col'), addon.im2col(...args)),
    col2im: (...args: Parameters<NativeAddon['col2im']>) => (count('col2im'), addon.col2im(...args)),
    channelSums: (...args: Parameters<NativeAddon['channelSums']>) => (count('channelSums'), addon.channelSums(...args)),
    channelBinary: (...args: Parameters<NativeAddon['channelBinary']>) => (count('channelBinary'), addon.channelBinary(...args)),
    info: () => addon.info(),
    setThreads: (n) => addon.setThreads(n),
  };
  loadNativeBlas({ reload: true, load: () => counting });
  try {
    await fn();
  } finally {
    loadNativeBlas({ reload: true });
  }
  return calls;
}
