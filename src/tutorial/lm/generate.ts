import * as tf from '@tensorflow/tfjs';
import { argumentError, checkOptions, isPositiveFinite, isPositiveInteger } from '../../core/errors';
import { seededRandom } from '../data/random';
import type { TinyGpt } from './model';
import type { CharTokenizer } from './tokenizer';

/** Options of {@link generateText}. */
export interface GenerateTextArgs {
  /** Text the generated characters continue (after the start token). Default `""`. */
  prompt?: string;
  /** Characters to generate (fewer when the context fills up). Default 60. */
  length?: number;
  /** Softmax temperature: below 1 sharper, above 1 flatter. Default 0.8. */
  temperature?: number;
  /** Seed of the sampling, so that a run repeats. Default 0. */
  seed?: number;
}

/**
 * Samples text from the model one character at a time: the start token and the prompt, then
 * repeatedly the next token drawn from the softmax of the last position's logits divided by the
 * temperature. Stops at `length` characters or when the context is full.
 */
export function generateText(model: TinyGpt, tokenizer: CharTokenizer, args: GenerateTextArgs = {}): string {
  const owner = 'generateText';
  const o = checkOptions<GenerateTextArgs>(owner, 'args', args, ['prompt', 'length', 'temperature', 'seed']);
  const length = o.length ?? 60;
  const temperature = o.temperature ?? 0.8;
  if (!isPositiveInteger(length)) throw argumentError(owner, 'length', 'a positive integer', length);
  if (!isPositiveFinite(temperature)) throw argumentError(owner, 'temperature', 'a finite number > 0', temperature);
  const uniform = seededRandom(o.seed ?? 0);
  const ids = [tokenizer.start, ...tokenizer.encode(o.prompt ?? '')];
  const room = model.config.contextLength - ids.length;
  for (let i = 0; i < Math.min(length, room); i++) {
    const next = tf.tidy(() => {
      const logits = model.logits(tf.tensor2d([ids], [1, ids.length], 'int32'));
      const last = tf.reshape(tf.slice(logits, [0, ids.length - 1, 0], [1, 1, -1]), [-1]);
      return tf.softmax(tf.div(last, temperature));
    });
    const probabilities = Float64Array.from(next.dataSync());
    next.dispose();
    // Inverse transform sampling; the special tokens (pad, start) are never drawn.
    probabilities[tokenizer.pad] = 0;
    probabilities[tokenizer.start] = 0;
    const total = probabilities.reduce((a, b) => a + b, 0);
    let u = uniform() * total;
    let drawn = probabilities.length - 1;
    for (let k = 0; k < probabilities.length; k++) {
      u -= probabilities[k];
      if (u < 0) {
        drawn = k;
        break;
      }
    }
    ids.push(drawn);
  }
  return tokenizer.decode(ids);
}
