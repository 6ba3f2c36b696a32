import type { RecordedParallelRun } from '../recordedRuns';

// Written by `node --import tsx scripts/bench/benchParallel.ts --record`; run it again on an idle machine to replace it.
export const RECORDED_PARALLEL_WINDOW: RecordedParallelRun = {
  "command": "node --import tsx scripts/bench/benchParallel.ts --record",
  "recordedAt": "2026-12-04T08:21:09.320Z",
  "cpu": "AMD EPYC",
  "cores": 2,
  "loadAverage": 1.38,
  "backend": "wasm",
  "model": "CNN with BatchNorm",
  "accumulationSteps": 8,
  "microBatchSize": 16,
  "singleThreadMs": 121.22306000000026,
  "trainers": [
    {
      "workers": 1,
      "sync": "window",
      "windowMs": 115.57356599999912,
      "speedup": 1.0488822331570282,
      "coresUsed": 1.1411346431934184
    },
    {
      "workers": 1,
      "sync": "round",
      "windowMs": 115.25430799999958,
      "speedup": 1.0517876694032182,
      "coresUsed": 1.0461387699278055
    },
    {
      "workers": 2,
      "sync": "window",
      "windowMs": 65.89316899999903,
      "speedup": 1.8396908486826917,
      "coresUsed": 1.8502980179933641
    },
    {
      "workers": 2,
      "sync": "round",
      "windowMs": 66.80268400000023,
      "speedup": 1.8146435553397802,
      "coresUsed": 1.7586868216253049
    }
  ],
  "processLimitSpeedup": 1.9944053044575691,
  "torchMs": 36.66484649875201
};
