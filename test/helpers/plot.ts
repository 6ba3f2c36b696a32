import { lineChart, type PlotlyFigure } from '../../src/tutorial/plot';

/** A small two-series chart with error bars, the figure every plot test draws. */
export function sampleFigure(name = 'accumulationSteps = 4'): PlotlyFigure {
  return lineChart({
    title: 'Loss per update',
    xTitle: 'updateStep',
    yTitle: 'loss',
    series: [
      { name: 'accumulationSteps = 1', x: [1, 2, 3], y: [1, 0.5, 0.25] },
      { name, x: [1, 2, 3], y: [1, 0.7, 0.4], dashed: true, errorY: [0.1, 0.1, 0.05] },
    ],
  });
}
