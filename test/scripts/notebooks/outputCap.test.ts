import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatBytes, OutputBudget, truncateUtf8, truncationNote } from '../../../scripts/notebooks/outputCap';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261203;

describe('truncateUtf8', () => {
  it('keeps the longest prefix that fits, never half a character', () => {
    assert.equal(truncateUtf8('abcdef', 3), 'abc');
    assert.equal(truncateUtf8('é€😀', 4), 'é', 'é is 2 bytes, € 3: 5 would not fit in 4');
    assert.equal(truncateUtf8('😀x', 3), '', 'a 4-byte character is not cut');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(40), (text, bytes) => {
        const cut = truncateUtf8(text, bytes);
        return text.startsWith(cut) && Buffer.byteLength(cut) <= bytes && !cut.includes('\uFFFD') && (cut === text || Buffer.byteLength(text.slice(0, cut.length + 2)) > bytes);
      }),
      { seed },
    );
  });
});

describe('OutputBudget', () => {
  it('gives each cell its cap and the notebook its own, and says which one ended the output', () => {
    const budget = new OutputBudget({ cellBytes: 10, notebookBytes: 25 });
    const a = budget.cell();
    assert.equal(a.allow(6), 6);
    assert.equal(a.allow(6), 4, 'the part that fits in the cell');
    assert.equal(a.truncated, 'cell');
    assert.equal(a.allow(1), 0, 'nothing once truncated');
    const b = budget.cell();
    assert.equal(b.allow(10), 10);
    const c = budget.cell();
    assert.equal(c.allow(8, true), 0, 'a display that does not fit is dropped whole');
    assert.equal(c.truncated, 'notebook');
    assert.match(c.note().text, /at most 25 B per notebook \(--max-notebook-output\); this cell's output past its first 0 B was dropped/);
  });

  it('never keeps more than either cap, whatever the outputs (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 120 }), fc.array(fc.array(fc.tuple(fc.nat(30), fc.boolean()), { maxLength: 8 }), { maxLength: 8 }), (cellBytes, notebookBytes, cells) => {
        const budget = new OutputBudget({ cellBytes, notebookBytes });
        let total = 0;
        for (const outputs of cells) {
          const cell = budget.cell();
          let kept = 0;
          for (const [bytes, whole] of outputs) {
            const n = cell.allow(bytes, whole);
            if (whole && n !== 0 && n !== bytes) return false;
            kept += n;
          }
          if (kept > cellBytes) return false;
          total += kept;
        }
        return total <= notebookBytes;
      }),
      { seed },
    );
  });

  it('names the caps in its note and in sizes a reader reads', () => {
    assert.equal(formatBytes(1_000_000), '1 MB');
    assert.equal(formatBytes(2_500), '2.5 kB');
    assert.equal(formatBytes(Infinity), 'no limit');
    assert.match(truncationNote(1_000_000, 'cell', { cellBytes: 1_000_000, notebookBytes: 1e7 }), /keeps at most 1 MB per cell \(--max-cell-output\); this cell's output past its first 1 MB was dropped/);
  });
});
