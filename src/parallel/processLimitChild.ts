import { createInterface } from 'node:readline';
import { BackendPreference, selectBackend } from '../backend/selectBackend';
import { singleThreadWindow, windowData } from './benchWindow';
import type { ProcessLimitChildArgs } from './processLimit';

/**
 * One independent process of `measureProcessLimit`: builds the model, warms up, says it is
 * ready, then times `run K` requests of K single-thread windows and answers with their times.
 */

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]) as ProcessLimitChildArgs;
  await selectBackend(args.backend as BackendPreference | undefined, { onNotice: () => {} });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const build = (require(args.model.module) as Record<string, (options: unknown) => import('@tensorflow/tfjs').LayersModel>)[args.model.export];
  const model = build(args.model.args);
  const window = singleThreadWindow(model, windowData(model, args.accumulationSteps, args.microBatchSize), args.loss);
  for (let i = 0; i < args.warmupWindows; i++) window.run();
  const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
  say({ ready: true });
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, count] = line.trim().split(' ');
    if (command !== 'run') break;
    const ms: number[] = [];
    for (let i = 0; i < Number(count); i++) {
      const start = performance.now();
      window.run();
      ms.push(performance.now() - start);
    }
    say({ ms });
  }
  window.dispose();
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
