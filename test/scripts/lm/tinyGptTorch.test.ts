import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GradientAccumulator, isBiasOrNormalization, nextTokenLoss, warmupCosine } from '../../../src/index';
import { CharTokenizer, TinyGpt, bookSentences, maxRelativeDifference, tokenBatches } from '../../../src/tutorial/index';
import { HANG_MS } from '../../helpers/ceilings';

/**
 * The same update as PyTorch: TinyGpt and its twin in scripts/lm/tiny_gpt.py start from the same
 * numbers (the tfjs weights, exported) and train on the same token ids of Moby Dick for 10
 * updates of two ragged micro-batches each, with token-exact accumulation, AdamW (decoupled weight
 * decay), a warm-up cosine schedule and clipping by global norm. The logged window losses must
 * agree to 1e-4 relative, and so must the weights at the end. Skipped, with the reason, where
 * Debian's python3-torch is not installed (`bash scripts/bench/benchDeps.sh` installs it).
 */

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(__dirname, '..', '..', '..', 'scripts', 'lm', 'tiny_gpt.py');
const UPDATES = 10;
const MICRO_BATCHES = [3, 5];
const OPTIMIZER = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0.1, clipNorm: 1 };

function torchMissing(): string | false {
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} cannot run (${probe.error.message}); install python3-torch to run this test`;
  if (probe.status !== 0) return `PyTorch is not installed for ${PYTHON} (apt-get install python3-torch, or bash scripts/bench/benchDeps.sh)`;
  return false;
}

const skip = torchMissing();
if (skip) console.log(`# skipped: ${skip}`);

describe('TinyGpt trains as its PyTorch twin (scripts/lm/tiny_gpt.py)', () => {
  it('10 AdamW updates of token-exact accumulation: the same losses and weights', { skip, timeout: HANG_MS }, () => {
    const tokenizer = new CharTokenizer();
    const config = { vocabularySize: tokenizer.vocabularySize, contextLength: 32, width: 32, heads: 4, layers: 2, seed: 7 };
    const model = new TinyGpt(config);
    const sizes = Array.from({ length: UPDATES }, () => MICRO_BATCHES).flat();
    const batches = tokenBatches(tokenizer, bookSentences(tokenizer, { maxLength: 31 }), sizes, 32);
    const schedule = warmupCosine({ peak: 3e-3, warmupSteps: 3, totalSteps: UPDATES, floor: 3e-4 });
    const request = {
      config,
      weights: model.namedWeights().map(({ name, variable }) => ({ name, shape: variable.shape, values: Array.from(variable.dataSync()) })),
      decayed: model.namedWeights().filter((w) => !isBiasOrNormalization(w.variable)).map((w) => w.name),
      windows: Array.from({ length: UPDATES }, (_, u) => batches.slice(2 * u, 2 * u + 2).map((b) => ({ tokens: b.tokens.arraySync(), mask: b.mask.arraySync() }))),
      optimizer: { ...OPTIMIZER, learningRates: Array.from({ length: UPDATES }, (_, u) => schedule(u)) },
    };
    const accumulator = new GradientAccumulator({
      optimizer: tf.train.adam(3e-3, OPTIMIZER.beta1, OPTIMIZER.beta2, OPTIMIZER.epsilon),
      accumulationSteps: MICRO_BATCHES.length,
      weightDecay: { rate: OPTIMIZER.weightDecay },
      clipNorm: OPTIMIZER.clipNorm,
      learningRate: schedule,
    });
    const losses: number[] = [];
    for (const b of batches) {
      const r = accumulator.step(() => nextTokenLoss(model.logits(b.tokens), b.tokens, b.mask));
      if (r.applied) losses.push(r.windowLoss as number);
    }
    const answer = spawnSync(PYTHON, [SCRIPT], { input: JSON.stringify(request), encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(answer.status, 0, answer.stderr);
    const torch = JSON.parse(answer.stdout) as { torch: string; losses: number[]; gradientNorms: number[]; weights: Record<string, number[]> };
    const lossGap = Math.max(...losses.map((l, i) => Math.abs(l / torch.losses[i] - 1)));
    const names = model.namedWeights();
    const weightGap = maxRelativeDifference(names.map((w) => w.variable.dataSync()), names.map((w) => torch.weights[w.name]));
    const moved = maxRelativeDifference(names.map((w) => w.variable.dataSync()), request.weights.map((w) => w.values));
    console.log(`# torch ${torch.torch}; tfjs ${tf.version.tfjs} on ${tf.getBackend()}`);
    console.log(`# losses tfjs:  ${losses.map((l) => l.toFixed(6)).join(' ')}`);
    console.log(`# losses torch: ${torch.losses.map((l) => l.toFixed(6)).join(' ')}`);
    console.log(`# gradient norms before clipping to ${OPTIMIZER.clipNorm} (torch): ${torch.gradientNorms.map((n) => n.toFixed(3)).join(' ')}`);
    console.log(`# max relative loss difference ${lossGap.toExponential(2)}; weights ${weightGap.toExponential(2)} (the training moved them by ${moved.toExponential(2)})`);
    assert.equal(losses.length, UPDATES);
    assert.ok(lossGap <= 1e-4, `losses differ by ${lossGap}`);
    assert.ok(weightGap <= 1e-4, `weights differ by ${weightGap}`);
    assert.ok(moved > 100 * weightGap, 'the comparison is not trivial: the weights moved far more than they differ');
    accumulator.dispose();
    batches.forEach((b) => b.dispose());
    model.dispose();
  });
});
