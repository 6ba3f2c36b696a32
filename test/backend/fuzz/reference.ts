import * as tf from '@tensorflow/tfjs';
import { Outputs } from './harness';

/**
 * Plain-loop references for the cases where stock tfjs `cpu` is itself wrong, so cannot be the
 * oracle: batch broadcasts of a matrix product (tfjs 4.22 compares only the batch counts),
 * bias and activation on them, and max pooling with a numeric pad and `ceil` rounding (its
 * gradient recomputes the output size without the rounding). Written from the definitions, in
 * float64, with no tfjs kernel involved.
 */

/** For each element of `outShape`, the flat index of the element of `inShape` broadcast onto it. */
export function broadcastIndex(outShape: readonly number[], inShape: readonly number[]): Int32Array {
  const size = outShape.reduce((a, b) => a * b, 1);
  const rank = outShape.length;
  const strides = new Array<number>(rank).fill(0);
  let stride = 1;
  for (let i = inShape.length - 1; i >= 0; i--) {
    const axis = rank - inShape.length + i;
    strides[axis] = inShape[i] === 1 ? 0 : stride;
    stride *= inShape[i];
  }
  const index = new Int32Array(size);
  for (let flat = 0; flat < size; flat++) {
    let rest = flat;
    let at = 0;
    for (let axis = rank - 1; axis >= 0; axis--) {
      const coord = rest % outShape[axis];
      rest = (rest - coord) / outShape[axis];
      at += coord * strides[axis];
    }
    index[flat] = at;
  }
  return index;
}

/** `op(a) · op(b)` with numpy broadcasting of the batch axes. */
export function matMulReference(a: Float32Array, aShape: number[], b: Float32Array, bShape: number[], transposeA: boolean, transposeB: boolean): Outputs[number] {
  const ra = aShape.length;
  const rb = bShape.length;
  const m = transposeA ? aShape[ra - 1] : aShape[ra - 2];
  const k = transposeA ? aShape[ra - 2] : aShape[ra - 1];
  const n = transposeB ? bShape[rb - 2] : bShape[rb - 1];
  const outer = tf.backend_util.assertAndGetBroadcastShape(aShape.slice(0, -2), bShape.slice(0, -2));
  const batch = outer.reduce((x, y) => x * y, 1);
  const ia = broadcastIndex(outer, aShape.slice(0, -2));
  const ib = broadcastIndex(outer, bShape.slice(0, -2));
  const out = new Float32Array(batch * m * n);
  for (let p = 0; p < batch; p++) {
    const a0 = ia[p] * m * k;
    const b0 = ib[p] * k * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let q = 0; q < k; q++) s += a[a0 + (transposeA ? q * m + i : i * k + q)] * b[b0 + (transposeB ? j * k + q : q * n + j)];
        out[(p * m + i) * n + j] = s;
      }
    }
  }
  return { data: out, shape: [...outer, m, n] };
}

/** `x + bias`, bias broadcast onto x's shape. */
export function addBroadcast(x: Outputs[number], bias: Float32Array, biasShape: number[]): Outputs[number] {
  const index = broadcastIndex(x.shape, biasShape);
  return { data: x.data.map((v, i) => Math.fround(v + bias[index[i]])), shape: x.shape };
}

/** tfjs's fused activations, element by element as its cpu kernels define them. */
export function activationReference(name: string, x: Outputs[number], leakyreluAlpha: number, prelu: { data: Float32Array; shape: number[] } | null): Outputs[number] {
  const alpha = prelu ? broadcastIndex(x.shape, prelu.shape) : null;
  const f = (v: number, i: number): number => {
    switch (name) {
      case 'linear':
        return v;
      case 'relu':
        return v < 0 ? 0 : v;
      case 'relu6':
        return Math.min(Math.max(0, v), 6);
      case 'elu':
        return v >= 0 ? v : Math.exp(v) - 1;
      case 'sigmoid':
        return 1 / (1 + Math.exp(-v));
      case 'leakyrelu':
        return v < 0 ? leakyreluAlpha * v : v;
      case 'prelu':
        return v < 0 ? (prelu as { data: Float32Array }).data[(alpha as Int32Array)[i]] * v : v;
      default:
        throw new Error(`no reference for activation ${name}`);
    }
  };
  return { data: x.data.map(f), shape: x.shape };
}

/** The geometry tfjs gives a 2-D pooling (its own bookkeeping; the loops below are ours). */
export function poolGeometry(xShape: number[], filterSize: number | [number, number], strides: number | [number, number], pad: 'valid' | 'same' | number, rounding?: 'floor' | 'round' | 'ceil'): tf.backend_util.Conv2DInfo {
  return tf.backend_util.computePool2DInfo(xShape as [number, number, number, number], filterSize, strides, 1, pad, rounding);
}

/**
 * Max pooling and its gradient: each window's first maximum in row-major order (NaN is never
 * one; windows of nothing but NaN, −Infinity or padding give −Infinity and pass no gradient), and
 * the gradient `dy` added at that position.
 */
export function maxPoolReference(x: Float32Array, g: tf.backend_util.Conv2DInfo, dy: Float32Array): { y: Float32Array; dx: Float32Array } {
  const { batchSize, inHeight, inWidth, inChannels: c, outHeight, outWidth } = g;
  // tfjs's forward pass is the identity for 1x1 windows that keep the shape (NaN passes there).
  const identity = g.filterHeight === 1 && g.filterWidth === 1 && g.inShape.join() === g.outShape.join();
  const y = new Float32Array(batchSize * outHeight * outWidth * c);
  const dx = new Float64Array(x.length);
  for (let b = 0; b < batchSize; b++) {
    for (let oh = 0; oh < outHeight; oh++) {
      for (let ow = 0; ow < outWidth; ow++) {
        for (let k = 0; k < c; k++) {
          let best = -Infinity;
          let where = -1;
          for (let r = 0; r < g.filterHeight; r++) {
            const ih = oh * g.strideHeight - g.padInfo.top + r;
            if (ih < 0 || ih >= inHeight) continue;
            for (let s = 0; s < g.filterWidth; s++) {
              const iw = ow * g.strideWidth - g.padInfo.left + s;
              if (iw < 0 || iw >= inWidth) continue;
              const i = ((b * inHeight + ih) * inWidth + iw) * c + k;
              if (x[i] > best) {
                best = x[i];
                where = i;
              }
            }
          }
          const o = ((b * outHeight + oh) * outWidth + ow) * c + k;
          y[o] = identity ? x[o] : best;
          if (where >= 0) dx[where] += dy[o];
        }
      }
    }
  }
  return { y, dx: Float32Array.from(dx) };
}

/**
 * A 2-D convolution (NHWC, tfjs's geometry) and, for an output gradient `dy`, both of its
 * gradients: `dx` and `dW` summed over every (output pixel, tap) pair that reads an input inside
 * the image. Used where tfjs's own gradients are wrong (a numeric pad with `ceil` rounding: tfjs
 * recomputes the output size without the rounding).
 */
export function conv2dReference(x: Float32Array, f: Float32Array, g: tf.backend_util.Conv2DInfo, dy: Float32Array): { y: Float32Array; dx: Float32Array; dW: Float32Array } {
  const { batchSize, inHeight, inWidth, inChannels: ci, outHeight, outWidth, outChannels: co, filterHeight: kh, filterWidth: kw } = g;
  const y = new Float64Array(batchSize * outHeight * outWidth * co);
  const dx = new Float64Array(x.length);
  const dW = new Float64Array(f.length);
  for (let b = 0; b < batchSize; b++) {
    for (let oh = 0; oh < outHeight; oh++) {
      for (let ow = 0; ow < outWidth; ow++) {
        const o = ((b * outHeight + oh) * outWidth + ow) * co;
        for (let r = 0; r < kh; r++) {
          const ih = oh * g.strideHeight - g.padInfo.top + r * g.dilationHeight;
          if (ih < 0 || ih >= inHeight) continue;
          for (let s = 0; s < kw; s++) {
            const iw = ow * g.strideWidth - g.padInfo.left + s * g.dilationWidth;
            if (iw < 0 || iw >= inWidth) continue;
            const xi = ((b * inHeight + ih) * inWidth + iw) * ci;
            const fi = (r * kw + s) * ci * co;
            for (let c = 0; c < ci; c++) {
              for (let q = 0; q < co; q++) {
                y[o + q] += x[xi + c] * f[fi + c * co + q];
                dx[xi + c] += dy[o + q] * f[fi + c * co + q];
                dW[fi + c * co + q] += dy[o + q] * x[xi + c];
              }
            }
          }
        }
      }
    }
  }
  return { y: Float32Array.from(y), dx: Float32Array.from(dx), dW: Float32Array.from(dW) };
}
