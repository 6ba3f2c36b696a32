import * as tf from '@tensorflow/tfjs';
import { argumentError, checkOptions, isPositiveInteger } from '../../core/errors';
import { gatherRows } from '../../core/gatherRows';
import { GroupNormalization } from '../../core/norm/groupNormalization';
import { causalSelfAttention } from './attention';

/**
 * A small GPT (Radford et al. 2019): token and position embeddings, `layers` pre-norm blocks of
 * causal multi-head self-attention and a GELU MLP, each added back to its input, then a final
 * normalization and a dense layer to one logit per token of the vocabulary. Layer normalization
 * is the library's `GroupNormalization` with one group, applied to each position's channels.
 *
 * Every weight is drawn from a seed (normal, standard deviation 0.02 as in GPT-2; biases 0,
 * normalization scales 1), so two models of the same arguments start equal, and
 * `namedWeights()` hands them to the PyTorch twin in scripts/lm/tiny_gpt.py under the names its
 * state dict uses.
 */

/** Options of {@link TinyGpt}. */
export interface TinyGptArgs {
  /** Tokens in the vocabulary (the tokenizer's `vocabularySize`). Required. */
  vocabularySize: number;
  /** Longest sequence, in tokens (rows of the position embedding). Default 64. */
  contextLength?: number;
  /** Channels of every position between the blocks. Default 64. */
  width?: number;
  /** Attention heads per block; must divide `width`. Default 4. */
  heads?: number;
  /** Transformer blocks. Default 2. */
  layers?: number;
  /** Seed of the initial weights. Default 0. */
  seed?: number;
}

/** The layers of one block, in the order of its forward pass. */
interface Block {
  attentionNorm: GroupNormalization;
  qkv: tf.layers.Layer;
  projection: tf.layers.Layer;
  mlpNorm: GroupNormalization;
  hidden: tf.layers.Layer;
  output: tf.layers.Layer;
}

const STDDEV = 0.02;
/** PyTorch's LayerNorm default, so that both models normalize alike. */
const EPSILON = 1e-5;
let models = 0;

/** The small causal transformer of chapter 9. Owns its weights: call `dispose()`. */
export class TinyGpt {
  /** The arguments, defaults filled in. */
  readonly config: Readonly<Required<TinyGptArgs>>;
  /** `[vocabularySize, width]`. */
  readonly tokenEmbedding: tf.Variable;
  /** `[contextLength, width]`. */
  readonly positionEmbedding: tf.Variable;
  private readonly blocks: Block[];
  private readonly finalNorm: GroupNormalization;
  private readonly head: tf.layers.Layer;

  constructor(args: TinyGptArgs) {
    const owner = 'TinyGpt';
    const o = checkOptions<TinyGptArgs>(owner, 'args', args, ['vocabularySize', 'contextLength', 'width', 'heads', 'layers', 'seed']);
    const config = { contextLength: 64, width: 64, heads: 4, layers: 2, seed: 0, ...o };
    for (const key of ['vocabularySize', 'contextLength', 'width', 'heads', 'layers'] as const) {
      if (!isPositiveInteger(config[key])) throw argumentError(owner, key, 'a positive integer', config[key]);
    }
    if (config.width % config.heads !== 0) throw argumentError(owner, 'heads', `a divisor of width (${config.width})`, config.heads);
    if (!Number.isInteger(config.seed)) throw argumentError(owner, 'seed', 'an integer', config.seed);
    this.config = config;
    const { vocabularySize, contextLength, width, seed } = config;
    let draws = 0;
    const nextSeed = () => seed * 1000 + ++draws;
    const prefix = `tiny_gpt_${++models}`;
    const embedding = (rows: number, name: string) =>
      tf.tidy(() => tf.variable(tf.randomNormal([rows, width], 0, STDDEV, 'float32', nextSeed()), true, `${prefix}/${name}/embeddings`));
    this.tokenEmbedding = embedding(vocabularySize, 'token_embedding');
    this.positionEmbedding = embedding(contextLength, 'position_embedding');
    const dense = (units: number, activation?: 'gelu') =>
      tf.layers.dense({ units, activation, kernelInitializer: tf.initializers.randomNormal({ stddev: STDDEV, seed: nextSeed() }) });
    const norm = () => new GroupNormalization({ groups: 1, epsilon: EPSILON });
    this.blocks = Array.from({ length: config.layers }, () => ({
      attentionNorm: norm(),
      qkv: dense(3 * width),
      projection: dense(width),
      mlpNorm: norm(),
      hidden: dense(4 * width, 'gelu'),
      output: dense(width),
    }));
    this.finalNorm = norm();
    this.head = dense(vocabularySize);
    // One forward pass builds every layer, so that all weights exist from here on.
    tf.tidy(() => {
      this.logits(tf.zeros([1, 2], 'int32') as tf.Tensor2D);
    });
  }

  /** Logits `[batch, time, vocabularySize]` of the next token at every position of `tokens` (`[batch, time]`, int32). */
  logits(tokens: tf.Tensor2D): tf.Tensor3D {
    return tf.tidy(() => this.readout(this.blocks.reduce((x, _, i) => this.block(i, x), this.embed(tokens))));
  }

  /** The blocks' input `[batch, time, width]`: each token's embedding plus its position's. */
  embed(tokens: tf.Tensor2D): tf.Tensor3D {
    const { contextLength, width } = this.config;
    if (!(tokens instanceof tf.Tensor) || tokens.rank !== 2 || tokens.dtype !== 'int32' || tokens.shape[1] > contextLength) {
      throw argumentError('TinyGpt', 'tokens', `an int32 tensor [batch, time] with time <= ${contextLength}`, tokens);
    }
    const [batch, time] = tokens.shape;
    return tf.tidy(() => {
      const looked = gatherRows(this.tokenEmbedding, tf.reshape(tokens, [batch * time]) as tf.Tensor1D);
      return tf.add(tf.reshape(looked, [batch, time, width]), tf.slice(this.positionEmbedding, [0, 0], [time, width])) as tf.Tensor3D;
    });
  }

  /** Block `index` (0-based): `x + attention(norm(x))`, then `+ mlp(norm(·))`. */
  block(index: number, x: tf.Tensor3D): tf.Tensor3D {
    const b = this.blocks[index];
    if (b === undefined) throw argumentError('TinyGpt.block', 'index', `an integer in [0, ${this.blocks.length})`, index);
    return tf.tidy(() => {
      const qkv = b.qkv.apply(this.normalize(b.attentionNorm, x)) as tf.Tensor;
      const attended = tf.add(x, b.projection.apply(causalSelfAttention(qkv, this.config.heads)) as tf.Tensor);
      const mlp = b.output.apply(b.hidden.apply(this.normalize(b.mlpNorm, attended))) as tf.Tensor;
      return tf.add(attended, mlp) as tf.Tensor3D;
    });
  }

  /** The final normalization and the output layer: logits `[batch, time, vocabularySize]`. */
  readout(x: tf.Tensor3D): tf.Tensor3D {
    return tf.tidy(() => this.head.apply(this.normalize(this.finalNorm, x)) as tf.Tensor3D);
  }

  /** Layer normalization of each position: one group over its channels, positions as samples. */
  private normalize(layer: GroupNormalization, x: tf.Tensor): tf.Tensor {
    const [batch, time, width] = x.shape;
    return tf.reshape(layer.apply(tf.reshape(x, [batch * time, width])) as tf.Tensor, [batch, time, width]);
  }

  /** The blocks' variables, block by block (what `recomputedGradients` differentiates per block). */
  blockWeights(index: number): tf.Variable[] {
    const b = this.blocks[index];
    if (b === undefined) throw argumentError('TinyGpt.blockWeights', 'index', `an integer in [0, ${this.blocks.length})`, index);
    return Object.values(b).flatMap((layer: tf.layers.Layer) => layer.trainableWeights.map((w) => w.read() as tf.Variable));
  }

  /** The final normalization's and the output layer's variables. */
  readoutWeights(): tf.Variable[] {
    return [this.finalNorm, this.head].flatMap((layer) => layer.trainableWeights.map((w) => w.read() as tf.Variable));
  }

  /**
   * Every weight under the name the PyTorch twin's state dict uses, in a fixed order. Dense
   * kernels keep tfjs's `[in, out]` layout (the twin multiplies `x @ W`, so no transpose).
   */
  namedWeights(): { name: string; variable: tf.Variable }[] {
    const of = (name: string, layer: tf.layers.Layer) => {
      const [first, second] = layer.trainableWeights.map((w) => w.read() as tf.Variable);
      return [{ name: `${name}.weight`, variable: first }, { name: `${name}.bias`, variable: second }];
    };
    return [
      { name: 'token_embedding', variable: this.tokenEmbedding },
      { name: 'position_embedding', variable: this.positionEmbedding },
      ...this.blocks.flatMap((b, i) =>
        (['attentionNorm', 'qkv', 'projection', 'mlpNorm', 'hidden', 'output'] as const).flatMap((k) => of(`blocks.${i}.${k}`, b[k])),
      ),
      ...of('final_norm', this.finalNorm),
      ...of('head', this.head),
    ];
  }

  /** The trainable variables, in the order of {@link namedWeights}. */
  get trainableWeights(): tf.Variable[] {
    return this.namedWeights().map((w) => w.variable);
  }

  /** Number of weights (scalars) in the model. */
  get parameterCount(): number {
    return this.trainableWeights.reduce((n, v) => n + v.size, 0);
  }

  /** Disposes every weight. */
  dispose(): void {
    tf.dispose([this.tokenEmbedding, this.positionEmbedding]);
    for (const b of this.blocks) Object.values(b).forEach((layer: tf.layers.Layer) => layer.dispose());
    this.finalNorm.dispose();
    this.head.dispose();
  }
}
