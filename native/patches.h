// The convolution lowering of the addon (patches.cc): im2col and its adjoint col2im, NHWC.
#pragma once

#include <napi.h>

namespace tfjs_accumulate {

// Adds im2col and col2im to the addon's exports.
void RegisterPatches(Napi::Env env, Napi::Object exports);

}  // namespace tfjs_accumulate
