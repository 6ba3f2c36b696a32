import * as tf from '@tensorflow/tfjs';

/**
 * Patch matrices of a 2-D convolution (NHWC), so that convolutions and their gradients become
 * matrix products: row `p = (n, oh, ow)` of the patch matrix holds the inputs that output pixel
 * reads, column `(kh, kw, ci)` in the filter's own order. Padding reads as zero.
 */
export type ConvGeometry = tf.backend_util.Conv2DInfo;

/** The geometry of a forward NHWC convolution from its kernel attributes (tfjs's own bookkeeping). */
export function forwardGeometry(x: tf.TensorInfo, filter: tf.TensorInfo, attrs: tf.NamedAttrMap): ConvGeometry {
  return tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filter.shape as [number, number, number, number],
    attrs.strides as number | [number, number],
    attrs.dilations as number | [number, number],
    attrs.pad as 'same' | 'valid' | number,
    attrs.dimRoundingMode as 'floor' | 'round' | 'ceil' | undefined,
    false,
    'channelsLast',
  );
}

/** `dst[p, (a, b, c)] = x[n, oh·s + a·d − top, ow·s + b·d − left, c]` (rows x kh·kw·ci). */
export function im2col(x: Float32Array, g: ConvGeometry, dst: Float32Array): void {
  const { batchSize, inHeight, inWidth, inChannels: ci, outHeight, outWidth, filterHeight: kh, filterWidth: kw } = g;
  let q = 0;
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      for (let ow = 0; ow < outWidth; ow++) {
        for (let a = 0; a < kh; a++) {
          const ih = oh * g.strideHeight - g.padInfo.top + a * g.dilationHeight;
          const rowInside = ih >= 0 && ih < inHeight;
          for (let b = 0; b < kw; b++) {
            const iw = ow * g.strideWidth - g.padInfo.left + b * g.dilationWidth;
            if (rowInside && iw >= 0 && iw < inWidth) {
              const from = ((n * inHeight + ih) * inWidth + iw) * ci;
              for (let c = 0; c < ci; c++) dst[q + c] = x[from + c];
            } else {
              for (let c = 0; c < ci; c++) dst[q + c] = 0;
            }
            q += ci;
          }
        }
      }
    }
  }
}

/** Adds each patch row back onto the input positions it was read from (the adjoint of im2col). */
export function col2im(cols: Float32Array, g: ConvGeometry, dx: Float32Array): void {
  const { batchSize, inHeight, inWidth, inChannels: ci, outHeight, outWidth, filterHeight: kh, filterWidth: kw } = g;
  dx.fill(0);
  let q = 0;
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      for (let ow = 0; ow < outWidth; ow++) {
        for (let a = 0; a < kh; a++) {
          const ih = oh * g.strideHeight - g.padInfo.top + a * g.dilationHeight;
          const rowInside = ih >= 0 && ih < inHeight;
          for (let b = 0; b < kw; b++) {
            const iw = ow * g.strideWidth - g.padInfo.left + b * g.dilationWidth;
            if (rowInside && iw >= 0 && iw < inWidth) {
              const to = ((n * inHeight + ih) * inWidth + iw) * ci;
              for (let c = 0; c < ci; c++) dx[to + c] += cols[q + c];
            }
            q += ci;
          }
        }
      }
    }
  }
}
