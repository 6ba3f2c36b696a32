import type { RecordedParallelRun } from '../recordedRuns';

// Written by `node --import tsx scripts/bench/benchParallel.ts --record --quick`; run it again on an idle machine to replace it.
export const RECORDED_PARALLEL_WINDOW: RecordedParallelRun = {
  "command": "node --import tsx scripts/bench/benchParallel.ts --record --quick",
  "recordedAt": "2026-12-04T08:09:35.055Z",
  "cpu": "AMD EPYC",
  "cores": 2,
  "loadAverage": 2.59,
  "backend": "wasm",
  "model": "CNN with BatchNorm",
  "accumulationSteps": 8,
  "microBatchSize": 16,
  "singleThreadMs": 185.5237419999994,
  "trainers": [
    {
      "workers": 1,
      "sync": "window",
      "windowMs": 158.43651899999986,
      "speedup": 1.170965779676083,
      "coresUsed": 1.3531854988558554
    },
    {
      "workers": 1,
      "sync": "round",
      "windowMs": 195.2750470000001,
      "speedup": 0.9500637426552473,
      "coresUsed": 1.2669975186332942
    },
    {
      "workers": 2,
      "sync": "window",
      "windowMs": 146.46433100000013,
      "speedup": 1.2666820701894936,
      "coresUsed": 1.6767768529253704
    },
    {
      "workers": 2,
      "sync": "round",
      "windowMs": 173.89757100000043,
      "speedup": 1.0668564312493989,
      "coresUsed": 1.7761720202520785
    }
  ],
  "processLimitSpeedup": 1.5376234130858186,
  "torchMs": null
};
