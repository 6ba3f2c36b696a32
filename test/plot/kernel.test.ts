import assert from 'node:assert/strict';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { kernelDisplayWriter, requireKernelWriter } from '../../src/plot/kernel';

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

  it('is undefined outside a kernel, and requireKernelWriter names the helper and the alternative', () => {
    assert.equal(kernelDisplayWriter(), undefined);
    assert.throws(() => requireKernelWriter('showThing', 'thingBundle(x)'), /^Error: showThing: no tslab kernel is running in this process\. .* elsewhere use thingBundle\(x\)\.$/);
  });
});
