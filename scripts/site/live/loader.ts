/**
 * The small script of a "run it in your browser" block (`assets/live/loader.js`): no tfjs. When
 * the reader presses the block's button it adds `run.js` (tfjs and the library, ./run.ts) to the
 * page, runs the chapter's example and shows the numbers and the chart. A classic script, so
 * that it works from file:// as well as over http. Its words come from the block
 * (`data-strings`, written by ./export.ts from the edition's strings), so that a Chinese page
 * says them in Chinese.
 */
interface LiveApi {
  run(kind: string, locale: string): Promise<{ backend: string; numbers: Record<string, number>; svg: string; tensorsLeft: number }>;
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

/** The words the script shows, as ./export.ts writes them into the block. */
interface LiveWords {
  loading: string;
  running: string;
  /** `{name}`: the backend's name. */
  backend: string;
  /** `{why}`: the error's message. */
  failed: string;
  numbers: Record<string, string>;
}

const escapeText = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function wire(block: HTMLElement): void {
  const button = block.querySelector<HTMLButtonElement>('button.live-run');
  const output = block.querySelector<HTMLElement>('.live-output');
  if (!button || !output) return;
  const words = JSON.parse(block.dataset.strings ?? '{}') as LiveWords;
  button.addEventListener('click', async () => {
    button.disabled = true;
    block.dataset.state = 'loading';
    output.textContent = words.loading;
    try {
      const live = await loadRunner();
      output.textContent = words.running;
      const result = await live.run(block.dataset.live ?? '', block.dataset.lang ?? 'en');
      const list = Object.entries(result.numbers)
        .map(([name, value]) => `<dt>${escapeText(words.numbers[name] ?? name)}</dt><dd data-name="${name}">${format(name, value)}</dd>`)
        .join('');
      // The sentence around the name is the edition's: '后端：{name}' has no space after its colon.
      const backend = escapeText(words.backend).replace('{name}', `<strong class="live-backend">${escapeText(result.backend)}</strong>`);
      output.innerHTML = `<p>${backend}</p><dl class="live-numbers">${list}</dl><figure class="live-chart">${result.svg}</figure>`;
      block.dataset.backend = result.backend;
      block.dataset.result = JSON.stringify({ ...result.numbers, tensorsLeft: result.tensorsLeft });
      block.dataset.state = 'done';
    } catch (error) {
      output.textContent = words.failed.replace('{why}', (error as Error).message);
      block.dataset.state = 'failed';
    } finally {
      button.disabled = false;
    }
  });
}

document.querySelectorAll<HTMLElement>('section.live-block').forEach(wire);
