// Per-channel reductions and broadcasts of the addon (channels.cc).
#pragma once

#include <napi.h>

namespace tfjs_accumulate {

// Adds channelSums and channelBinary to the addon's exports.
void RegisterChannels(Napi::Env env, Napi::Object exports);

}  // namespace tfjs_accumulate
