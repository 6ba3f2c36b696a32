// im2col and col2im on the caller's Float32Arrays (NHWC), so that a convolution and both of its
// gradients become one cblas_sgemm each (src/backend/kernels/nativeConv2d.ts):
//
//   im2col(x, geometry, rowStart, rowCount, dst)
//     Writes rows rowStart .. rowStart + rowCount − 1 of the patch matrix of x into dst (row
//     p − rowStart at dst[(p − rowStart) · depth]): row p = (n, oh, ow) holds the inputs that output
//     pixel reads, column (a, b, c) in the filter's own [kh, kw, ci] order; padding reads as zero.
//   col2im(cols, geometry, rowStart, rowCount, dx, zero)
//     The adjoint: adds those rows of a patch-shaped matrix back onto the input positions they
//     were read from (after setting all of dx to zero when `zero` is true).
//
// geometry is an array of 14 integers: [batch, inHeight, inWidth, inChannels, outHeight,
// outWidth, filterHeight, filterWidth, strideHeight, strideWidth, dilationHeight, dilationWidth,
// padTop, padLeft], tfjs's Conv2DInfo. Every array is bounds-checked against the geometry first.
//
// Why here and not in JS: the patch matrix of the digit CNN's second layer at batch 16 is 3136 x
// 144 floats; the JS loop copying it took longer than the product itself. The inner copies are
// plain loops the compiler vectorizes; with dilation 1 the kw taps of a filter row inside the
// image are one contiguous run of the input, copied (or added) at once (ForEachTap).
#include "patches.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "args.h"

namespace tfjs_accumulate {
namespace {

struct Geometry {
  int64_t batch, inH, inW, ci, outH, outW, kh, kw, sh, sw, dh, dw, top, left;
  int64_t rows() const { return batch * outH * outW; }
  int64_t depth() const { return kh * kw * ci; }
  int64_t inputSize() const { return batch * inH * inW * ci; }
};

constexpr int64_t kLimit = int64_t{1} << 40;  // far above any Float32Array, far below overflow

// a · b, saturated at kLimit (so that the bounds checks cannot overflow).
int64_t Times(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kLimit / b ? kLimit : std::min(kLimit, a * b);
}

bool ReadGeometry(const Napi::CallbackInfo& info, size_t i, const char* owner, Geometry* g) {
  static const char* kNames[14] = {"batch", "inHeight", "inWidth", "inChannels", "outHeight", "outWidth", "filterHeight",
                                   "filterWidth", "strideHeight", "strideWidth", "dilationHeight", "dilationWidth", "padTop", "padLeft"};
  if (!info[i].IsArray() || info[i].As<Napi::Array>().Length() != 14) {
    return Fail(info.Env(), owner, "geometry must be an array of 14 integers [batch, inHeight, inWidth, inChannels, outHeight, outWidth, filterHeight, filterWidth, strideHeight, strideWidth, dilationHeight, dilationWidth, padTop, padLeft]");
  }
  Napi::Array a = info[i].As<Napi::Array>();
  int64_t v[14];
  for (uint32_t j = 0; j < 14; j++) {
    // An element may be a getter that throws: stop there, with its exception pending.
    Napi::Value element = a.Get(j);
    if (info.Env().IsExceptionPending()) return false;
    if (!ReadIntValue(info.Env(), element, owner, std::string("geometry.") + kNames[j], &v[j])) return false;
  }
  *g = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
  if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1) {
    return Fail(info.Env(), owner, "filter sizes, strides and dilations must be at least 1");
  }
  return true;
}

// The checks both functions share; on success `patches` is the patch-matrix array, `image` the
// NHWC one, and [rowStart, rowStart + rowCount) a range of patch rows.
bool ReadCall(const Napi::CallbackInfo& info, const char* owner, size_t patchesArg, size_t imageArg, Geometry* g, int64_t* rowStart,
              int64_t* rowCount, Napi::Float32Array* patches, Napi::Float32Array* image) {
  if (!ReadGeometry(info, 1, owner, g) || !ReadInt(info, 2, owner, "rowStart", rowStart) || !ReadInt(info, 3, owner, "rowCount", rowCount) ||
      !ReadArray(info, patchesArg, owner, patchesArg == 0 ? "cols" : "dst", patches) || !ReadArray(info, imageArg, owner, imageArg == 0 ? "x" : "dx", image)) {
    return false;
  }
  int64_t rows = Times(Times(g->batch, g->outH), g->outW);
  if (*rowStart + *rowCount > rows) return Fail(info.Env(), owner, "rowStart + rowCount is past the last patch row (batch · outHeight · outWidth)");
  if (Times(Times(Times(g->batch, g->inH), g->inW), g->ci) > static_cast<int64_t>(image->ElementLength())) {
    return Fail(info.Env(), owner, "the image array is shorter than batch · inHeight · inWidth · inChannels");
  }
  if (Times(*rowCount, Times(Times(g->kh, g->kw), g->ci)) > static_cast<int64_t>(patches->ElementLength())) {
    return Fail(info.Env(), owner, "the patch array is shorter than rowCount · filterHeight · filterWidth · inChannels");
  }
  return true;
}

// Walks patch rows rowStart .. rowStart + rowCount − 1, one output row (n, oh) segment at a
// time, and for each filter row a and tap b calls pair(patch, image, ci) on the ci floats the tap
// reads and pad(patch, count) on those that fall in the padding. Output columns whose taps are all
// inside the image horizontally (the interior, most of them) take no bounds checks; with dilation
// 1 a segment's interior columns go to one call, interior(patch, image, columns): column k's
// kw·ci floats at patch + k·depth and image + k·sw·ci. With few input channels per-tap calls and
// checks had cost more than the copies (0.6 ms for the digit CNN's first layer at batch 16).
template <typename Pair, typename Pad, typename Interior>
void ForEachTap(const Geometry& g, int64_t rowStart, int64_t rowCount, float* patches, Pair pair, Pad pad, Interior interior) {
  const int64_t ci = g.ci, rowLength = g.kw * ci, depth = g.depth();
  // Interior columns: ow·sw − left ≥ 0 and ow·sw − left + (kw − 1)·dw ≤ inW − 1.
  const int64_t owLo = std::min(g.outW, (g.left + g.sw - 1) / g.sw);
  const int64_t lastStart = g.inW - 1 - (g.kw - 1) * g.dw + g.left;
  const int64_t owHi = lastStart < 0 ? owLo : std::clamp<int64_t>(lastStart / g.sw + 1, owLo, g.outW);
  int64_t ow = rowStart % g.outW, oh = (rowStart / g.outW) % g.outH, n = rowStart / (g.outW * g.outH);
  for (int64_t r = 0; r < rowCount;) {
    const int64_t span = std::min(g.outW - ow, rowCount - r);
    for (int64_t a = 0; a < g.kh; a++) {
      float* base = patches + r * depth + a * rowLength;
      const int64_t ih = oh * g.sh - g.top + a * g.dh;
      if (ih < 0 || ih >= g.inH) {
        for (int64_t k = 0; k < span; k++) pad(base + k * depth, rowLength);
        continue;
      }
      const int64_t imageRow = (n * g.inH + ih) * g.inW * ci;
      // The interior columns of this segment, [kLo, kHi), in one call with dilation 1.
      const int64_t kLo = std::clamp<int64_t>(owLo - ow, 0, span), kHi = std::clamp<int64_t>(owHi - ow, kLo, span);
      if (g.dw == 1 && kHi > kLo) interior(base + kLo * depth, imageRow + ((ow + kLo) * g.sw - g.left) * ci, kHi - kLo);
      for (int64_t k = 0; k < span; k++) {
        const int64_t o = ow + k;
        float* d = base + k * depth;
        const int64_t iw0 = o * g.sw - g.left;
        if (o >= owLo && o < owHi) {
          if (g.dw != 1) {
            for (int64_t b = 0; b < g.kw; b++) pair(d + b * ci, imageRow + (iw0 + b * g.dw) * ci, ci);
          }
          continue;
        }
        for (int64_t b = 0; b < g.kw; b++) {
          const int64_t iw = iw0 + b * g.dw;
          if (iw >= 0 && iw < g.inW) {
            pair(d + b * ci, imageRow + iw * ci, ci);
          } else {
            pad(d + b * ci, ci);
          }
        }
      }
    }
    r += span;
    ow += span;
    if (ow == g.outW) {
      ow = 0;
      if (++oh == g.outH) oh = 0, n++;
    }
  }
}

// Rows of a filter row's floats shorter than this are copied column-major (j outer, columns
// inner): a loop of kw·ci = 3 floats per column (one input channel) costs more in loop overhead
// than in copying.
constexpr int64_t kShortRun = 8;

void Im2col(const float* x, const Geometry& g, int64_t rowStart, int64_t rowCount, float* dst) {
  const int64_t runLength = g.kw * g.ci, depth = g.depth(), step = g.sw * g.ci;
  ForEachTap(
      g, rowStart, rowCount, dst,
      [x](float* __restrict d, int64_t from, int64_t count) {
        const float* __restrict s = x + from;
        for (int64_t j = 0; j < count; j++) d[j] = s[j];
      },
      [](float* d, int64_t count) { std::fill(d, d + count, 0.0f); },
      [&](float* __restrict d, int64_t from, int64_t columns) {
        const float* __restrict s = x + from;
        if (runLength < kShortRun) {
          for (int64_t j = 0; j < runLength; j++) {
            for (int64_t k = 0; k < columns; k++) d[k * depth + j] = s[k * step + j];
          }
          return;
        }
        for (int64_t k = 0; k < columns; k++) {
          for (int64_t j = 0; j < runLength; j++) d[k * depth + j] = s[k * step + j];
        }
      });
}

void Col2im(const float* cols, const Geometry& g, int64_t rowStart, int64_t rowCount, float* dx) {
  const int64_t runLength = g.kw * g.ci, depth = g.depth(), step = g.sw * g.ci;
  // The patch matrix is only read here; ForEachTap hands out mutable pointers for im2col's sake.
  ForEachTap(
      g, rowStart, rowCount, const_cast<float*>(cols),
      [dx](float* __restrict c, int64_t to, int64_t count) {
        float* __restrict o = dx + to;
        for (int64_t j = 0; j < count; j++) o[j] += c[j];
      },
      [](float*, int64_t) {},
      [&](float* c, int64_t to, int64_t columns) {
        // Columns overlap in dx when sw < kw; each inner loop below touches distinct elements.
        float* o = dx + to;
        if (runLength < kShortRun) {
          for (int64_t j = 0; j < runLength; j++) {
            for (int64_t k = 0; k < columns; k++) o[k * step + j] += c[k * depth + j];
          }
          return;
        }
        for (int64_t k = 0; k < columns; k++) {
          for (int64_t j = 0; j < runLength; j++) o[k * step + j] += c[k * depth + j];
        }
      });
}

Napi::Value Im2colCall(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* owner = "im2col";
  if (WrongCount(info, owner, 5, "x, geometry, rowStart, rowCount, dst")) return env.Undefined();
  Geometry g;
  int64_t rowStart, rowCount;
  Napi::Float32Array dst, x;
  if (!ReadCall(info, owner, 4, 0, &g, &rowStart, &rowCount, &dst, &x)) return env.Undefined();
  if (rowCount > 0 && g.depth() > 0) Im2col(x.Data(), g, rowStart, rowCount, dst.Data());
  return env.Undefined();
}

Napi::Value Col2imCall(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* owner = "col2im";
  if (WrongCount(info, owner, 6, "cols, geometry, rowStart, rowCount, dx, zero")) return env.Undefined();
  if (!info[5].IsBoolean()) {
    Fail(env, owner, "zero must be a boolean");
    return env.Undefined();
  }
  Geometry g;
  int64_t rowStart, rowCount;
  Napi::Float32Array cols, dx;
  if (!ReadCall(info, owner, 0, 4, &g, &rowStart, &rowCount, &cols, &dx)) return env.Undefined();
  if (info[5].As<Napi::Boolean>().Value()) std::fill(dx.Data(), dx.Data() + g.inputSize(), 0.0f);
  if (rowCount > 0 && g.depth() > 0) Col2im(cols.Data(), g, rowStart, rowCount, dx.Data());
  return env.Undefined();
}

}  // namespace

void RegisterPatches(Napi::Env env, Napi::Object exports) {
  exports.Set("im2col", Napi::Function::New(env, Im2colCall));
  exports.Set("col2im", Napi::Function::New(env, Col2imCall));
}

}  // namespace tfjs_accumulate
