import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FAST_KERNEL_BACKENDS, installedFastKernels, installFastKernels, tfjsBackendOf, uninstallFastKernels } from '../../src/backend/kernels';
import { nativeAvailable } from '../helpers/kernelParity';
import * as batchNorm from './fuzz/batchNorm';
import * as batchNormLayer from './fuzz/batchNormLayer';
import * as convolutions from './fuzz/convolutions';
import * as elementwise from './fuzz/elementwise';
import * as losses from './fuzz/losses';
import { Family, fuzz, FUZZ_SEED, FUZZ_SETS, uncovered } from './fuzz/harness';
import * as pooling from './fuzz/pooling';
import * as products from './fuzz/products';
import * as reductions from './fuzz/reductions';

/**
 * The kernel fuzz: generated cases for every kernel the project registers, on every kernel set it
 * registers them on, each compared with stock tfjs `cpu` or a plain-loop reference, forward and
 * gradient. fast-check shrinks a failure to the smallest case that still fails and prints it
 * with the kernel, the set, the shapes and the attributes.
 *
 *     node --import tsx --test test/backend/kernelFuzz.test.ts              # the default run (npm test)
 *     FC_RUNS=2000 node --import tsx --test test/backend/kernelFuzz.test.ts # a deep run: 2000 cases per family
 *     FC_SEED=7 node --import tsx --test test/backend/kernelFuzz.test.ts    # another seed
 *
 * (`--runs=2000` after the file name does the same as FC_RUNS.) With the native addon built, or
 * TFJS_ACCUMULATE_REQUIRE_NATIVE=1 as in CI, the `native` and `native-cpu` sets are fuzzed too.
 */

/** Every family with its default number of cases (what keeps the whole run near a minute idle). */
const FAMILIES: [Family<never>, number][] = [
  [products.batchMatMul, 60],
  [products.fusedMatMul, 60],
  [products.weightProducts, 15],
  [products.fusedMatMulGradient, 30],
  [convolutions.conv2d, 60],
  [convolutions.fusedConv2d, 50],
  [convolutions.conv2dGradients, 50],
  [convolutions.fusedConv2dGradients, 40],
  [convolutions.depthwiseConv2d, 50],
  [convolutions.fusedDepthwiseConv2d, 40],
  [convolutions.depthwiseGradients, 40],
  [convolutions.convWeightGradients, 15],
  [pooling.maxPool, 60],
  [elementwise.tile, 50],
  [elementwise.binary, 60],
  [elementwise.relu, 40],
  [elementwise.identity, 40],
  [elementwise.addCheckedFamily, 40],
  [elementwise.addCheckedAllFamily, 40],
  [elementwise.addCheckedAllFirstFamily, 40],
  [reductions.sumMean, 60],
  [reductions.sumMeanGradients, 40],
  [batchNorm.batchNorm, 50],
  [batchNorm.batchNormGradients, 40],
  [losses.softmaxCrossEntropyGradient, 40],
  [batchNormLayer.batchNormLayerTraining, 40],
] as unknown as [Family<never>, number][];

/** Every kernel and gradient `installFastKernels` registers, over every kernel set. */
function registeredEverywhere(): string[] {
  const names: string[] = [];
  for (const set of FAST_KERNEL_BACKENDS) {
    if ((set === 'native' || set === 'native-cpu') && !nativeAvailable()) continue;
    uninstallFastKernels();
    installFastKernels(set);
    names.push(...installedFastKernels(tfjsBackendOf(set)).map((k) => k.kernel));
  }
  uninstallFastKernels();
  return names;
}

test('the fuzz covers every kernel and gradient the project registers, on every kernel set', () => {
  assert.deepEqual(uncovered(registeredEverywhere(), FAMILIES.map(([f]) => f)), []);
  assert.deepEqual([...FUZZ_SETS], ['wasm', 'cpu', ...(nativeAvailable() ? ['native', 'native-cpu'] : [])]);
});

test('the coverage check names a registered kernel that no family runs', () => {
  assert.deepEqual(uncovered(['Tile', 'Conv2D', 'gradient of Sum'], [{ kernels: ['Conv2D'] }, { kernels: ['gradient of Sum'] }]), ['Tile']);
});

for (const [family, runs] of FAMILIES) {
  test(`fuzz (seed ${FUZZ_SEED}): ${family.name}`, async () => {
    await fuzz(family, runs);
  });
}
