/**
 * The small script of a "run it in your browser" block (`assets/live/loader.js`): no tfjs. When
 * the reader presses the block's button it adds `run.js` (tfjs and the library, ./run.ts) to the
 * page, runs the chapter's example and shows the numbers and the chart. A classic script, so
 * that it works from file:// as well as over http.
 */
interface LiveApi {
  run(kind: string): Promise<{ backend: string; numbers: Record<string, number>; svg: string; tensorsLeft: number }>;
}

const scriptUrl = (document.currentScript as HTMLScriptElement | null)?.src ?? '';

function loadRunner(): Promise<LiveApi> {
  const existing = (window as unknown as { tfjsAccumulateLive?: LiveApi }).tfjsAccumulateLive;
  if (existing) return Promise.resolve(existing);
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = new URL('run.js', scriptUrl || location.href).href;
    script.onload = () => resolve((window as unknown as { tfjsAccumulateLive: LiveApi }).tfjsAccumulateLive);
    script.onerror = () => reject(new Error(`could not load ${script.src}`));
    document.head.appendChild(script);
  });
}

/** Integers as they are, times in whole ms, tiny differences in exponent form, the rest to 4 places. */
const format = (name: string, v: number) =>
  name === 'ms' ? `${Math.round(v)} ms` : Number.isInteger(v) ? String(v) : Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toFixed(4);

function wire(block: HTMLElement): void {
  const button = block.querySelector<HTMLButtonElement>('button.live-run');
  const output = block.querySelector<HTMLElement>('.live-output');
  if (!button || !output) return;
  button.addEventListener('click', async () => {
    button.disabled = true;
    block.dataset.state = 'loading';
    output.textContent = 'Loading TensorFlow.js and tfjs-accumulate…';
    try {
      const live = await loadRunner();
      output.textContent = 'Running…';
      const result = await live.run(block.dataset.live ?? '');
      const list = Object.entries(result.numbers)
        .map(([name, value]) => `<dt>${name}</dt><dd data-name="${name}">${format(name, value)}</dd>`)
        .join('');
      output.innerHTML = `<p>Backend: <strong class="live-backend">${result.backend}</strong></p><dl class="live-numbers">${list}</dl><figure class="live-chart">${result.svg}</figure>`;
      block.dataset.backend = result.backend;
      block.dataset.result = JSON.stringify({ ...result.numbers, tensorsLeft: result.tensorsLeft });
      block.dataset.state = 'done';
    } catch (error) {
      output.textContent = `The example could not run here: ${(error as Error).message}`;
      block.dataset.state = 'failed';
    } finally {
      button.disabled = false;
    }
  });
}

document.querySelectorAll<HTMLElement>('section.live-block').forEach(wire);
