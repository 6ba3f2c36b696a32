// Argument checks shared by the addon's functions (blas.cc, patches.cc): every number and array
// is validated before native code touches memory, and a bad one throws a TypeError that names
// the function and the argument.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

namespace tfjs_accumulate {

inline bool Fail(Napi::Env env, const char* owner, const std::string& message) {
  Napi::TypeError::New(env, std::string("tfjs-accumulate native ") + owner + ": " + message).ThrowAsJavaScriptException();
  return false;
}

// Reads a value as a non-negative integer that fits in an int.
inline bool ReadIntValue(Napi::Env env, const Napi::Value& value, const char* owner, const std::string& name, int64_t* out) {
  if (!value.IsNumber()) return Fail(env, owner, name + " must be a number");
  double v = value.As<Napi::Number>().DoubleValue();
  if (!(v >= 0) || v > 2147483647.0 || v != static_cast<double>(static_cast<int64_t>(v))) {
    return Fail(env, owner, name + " must be a non-negative integer below 2^31");
  }
  *out = static_cast<int64_t>(v);
  return true;
}

inline bool ReadInt(const Napi::CallbackInfo& info, size_t i, const char* owner, const char* name, int64_t* out) {
  return ReadIntValue(info.Env(), info[i], owner, name, out);
}

inline bool ReadArray(const Napi::CallbackInfo& info, size_t i, const char* owner, const char* name, Napi::Float32Array* out) {
  if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
    return Fail(info.Env(), owner, std::string(name) + " must be a Float32Array");
  }
  *out = info[i].As<Napi::Float32Array>();
  return true;
}

}  // namespace tfjs_accumulate
