import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cellOutputs, findLosses, formattingDifferences } from '../../../scripts/deno/compareOutputs';
import type { NotebookJson, OutputJson } from '../../../scripts/deno/notebooks';

const stdout = (text: string | string[]): OutputJson => ({ output_type: 'stream', name: 'stdout', text });
const display: OutputJson = { output_type: 'display_data', data: { 'text/plain': 'chart' } };

/** A notebook with a markdown title and one code cell per entry. */
function notebook(cells: { source: string; outputs: OutputJson[] }[]): NotebookJson {
  return { cells: [{ cell_type: 'markdown', source: '# Title' }, ...cells.map((c) => ({ cell_type: 'code', ...c }))] };
}

const summary = ['Layer (type)  Output shape  Param #', 'dense (Dense)  [null,1]  11', 'Total params: 11'];

describe('cellOutputs', () => {
  it('counts printed lines across stream outputs, whether nbformat stored the text whole or as lines', () => {
    const [cell] = cellOutputs(notebook([{ source: '\nmodel.summary();', outputs: [stdout(['a\n', 'b\n']), stdout('c\n'), display] }]));
    assert.deepEqual(cell, { cell: 2, firstLine: 'model.summary();', stdout: ['a', 'b', 'c'], stderr: [], displays: 1, results: 0 });
  });
});

describe('findLosses', () => {
  const reference = notebook([
    { source: 'model.summary();', outputs: [stdout(`${summary.join('\n')}\n`)] },
    { source: "console.log('next');", outputs: [stdout('next\n')] },
    { source: 'await showFigure(fig);', outputs: [display] },
  ]);

  it('accepts the same number of lines with different formatting, and extra lines', () => {
    const candidate = notebook([
      { source: 'model.summary();', outputs: [stdout(`${summary.join('\n').replace('[null,1]', '[ null, 1 ]')}\n`)] },
      { source: "console.log('next');", outputs: [stdout('next\nand a warning\n')] },
      { source: 'await showFigure(fig);', outputs: [display] },
    ]);
    assert.deepEqual(findLosses(reference, candidate), []);
  });

  it('fails a cell whose last lines were lost', () => {
    const candidate = notebook([
      { source: 'model.summary();', outputs: [stdout(`${summary.slice(0, 1).join('\n')}\n`)] },
      { source: "console.log('next');", outputs: [stdout('next\n')] },
      { source: 'await showFigure(fig);', outputs: [display] },
    ]);
    assert.deepEqual(findLosses(reference, candidate), ['cell 2 ("model.summary();"): 1 stdout lines under Deno, 3 under tslab (tslab\'s last: "Total params: 11")']);
  });

  it('fails the cell that lost lines to the next cell, though the total is the same', () => {
    const candidate = notebook([
      { source: 'model.summary();', outputs: [stdout(`${summary.slice(0, 2).join('\n')}\n`)] },
      { source: "console.log('next');", outputs: [stdout(`${summary[2]}\nnext\n`)] },
      { source: 'await showFigure(fig);', outputs: [display] },
    ]);
    assert.equal(findLosses(reference, candidate).length, 1);
    assert.match(findLosses(reference, candidate)[0], /^cell 2 .*: 2 stdout lines under Deno, 3 under tslab/);
  });

  it('fails a lost display and refuses to compare different notebooks', () => {
    const candidate = notebook([
      { source: 'model.summary();', outputs: [stdout(`${summary.join('\n')}\n`)] },
      { source: "console.log('next');", outputs: [stdout('next\n')] },
      { source: 'await showFigure(fig);', outputs: [] },
    ]);
    assert.deepEqual(findLosses(reference, candidate), ['cell 4 ("await showFigure(fig);"): 0 displays under Deno, 1 under tslab']);
    assert.match(findLosses(reference, notebook([]))[0], /different code cells/);
  });
});

describe('formattingDifferences', () => {
  it('lists the lines that differ in cells that printed as many lines under both kernels', () => {
    const tslab = notebook([
      { source: 'a', outputs: [stdout("{ loss: 'mse' }\nsame\n")] },
      { source: 'b', outputs: [stdout('one\n')] },
    ]);
    const deno = notebook([
      { source: 'a', outputs: [stdout('{ loss: "mse" }\nsame\n')] },
      { source: 'b', outputs: [stdout('one\ntwo\n')] },
    ]);
    assert.deepEqual(formattingDifferences(tslab, deno), [`cell 2 stdout: tslab "{ loss: 'mse' }" | Deno "{ loss: \\"mse\\" }"`]);
  });
});
