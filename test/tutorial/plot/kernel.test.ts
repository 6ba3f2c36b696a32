import assert from 'node:assert/strict';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { denoJupyter, kernelDisplayWriter, kernelPublisher, requireKernelPublisher } from '../../../src/tutorial/plot/kernel';

describe('kernelDisplayWriter', () => {
  it('finds the kernel’s writer in another copy of tslab than the one this package resolves', () => {
    // A kernel started from a global tslab, say, loads its own dist/jupyter.js.
    const other = path.join(os.tmpdir(), 'elsewhere', 'node_modules', 'tslab', 'dist', 'jupyter.js');
    const sent: unknown[] = [];
    const mod = new Module(other);
    mod.filename = other;
    mod.loaded = true;
    mod.exports = { lastWriteDisplayData: (content: unknown) => sent.push(content) };
    require.cache[other] = mod;
    try {
      kernelDisplayWriter()!({ data: {}, metadata: {}, transient: {} });
    } finally {
      delete require.cache[other];
    }
    assert.equal(sent.length, 1);
  });

  it('is undefined outside a kernel, and requireKernelPublisher names the helper and the alternative', () => {
    assert.equal(kernelDisplayWriter(), undefined);
    assert.equal(kernelPublisher(), undefined);
    assert.throws(
      () => requireKernelPublisher('showThing', 'thingBundle(x)'),
      /^Error: showThing: no notebook kernel \(tslab or Deno\) is running in this process\. .* elsewhere use thingBundle\(x\)\.$/,
    );
  });
});

/** Runs `body` with a stand-in for Deno's global, as Deno's kernel (or `deno run`) has it. */
async function withDeno(deno: object, body: () => Promise<void> | void): Promise<void> {
  const g = globalThis as { Deno?: unknown };
  g.Deno = deno;
  try {
    await body();
  } finally {
    delete g.Deno;
  }
}

describe('kernelPublisher under Deno', () => {
  it("publishes through Deno.jupyter.display as a raw bundle, and resolves after Deno's display", async () => {
    const sent: { obj: unknown; options: unknown }[] = [];
    let displayed = false;
    const jupyter = {
      display: async (obj: unknown, options: unknown) => {
        await new Promise((r) => setTimeout(r, 5));
        sent.push({ obj, options });
        displayed = true;
      },
    };
    await withDeno({ jupyter }, async () => {
      const publish = requireKernelPublisher('showThing', 'x');
      const data = { 'text/plain': 'a chart', 'text/html': '<svg></svg>' };
      const done = publish({ data, metadata: {} });
      assert.equal(displayed, false, 'the promise is what a cell awaits');
      await done;
      assert.deepEqual(sent, [{ obj: data, options: { raw: true } }]);
    });
  });

  it('is undefined under `deno run`, where reading Deno.jupyter throws', async () => {
    const deno = Object.defineProperty({}, 'jupyter', {
      get() {
        throw new TypeError('Deno.jupyter is only available in `deno jupyter` subcommand.');
      },
    });
    await withDeno(deno, () => {
      assert.equal(denoJupyter(), undefined);
      assert.throws(() => requireKernelPublisher('showThing', 'x'), /no notebook kernel \(tslab or Deno\)/);
    });
  });

  it('prefers tslab when both are present (a tslab kernel never has a Deno global)', async () => {
    const other = path.join(os.tmpdir(), 'both', 'node_modules', 'tslab', 'dist', 'jupyter.js');
    const sent: string[] = [];
    const mod = new Module(other);
    mod.filename = other;
    mod.loaded = true;
    mod.exports = { lastWriteDisplayData: () => sent.push('tslab') };
    require.cache[other] = mod;
    try {
      await withDeno({ jupyter: { display: async () => void sent.push('deno') } }, () => kernelPublisher()!({ data: {}, metadata: {} }));
    } finally {
      delete require.cache[other];
    }
    assert.deepEqual(sent, ['tslab']);
  });
});
