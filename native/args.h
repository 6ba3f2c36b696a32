// Argument checks shared by the addon's functions (blas.cc, patches.cc, channels.cc): every
// number and array is validated before native code touches memory, and a bad one throws a
// TypeError that names the function and the argument. Nothing here calls back into JavaScript
// (no valueOf, no getters: a number must be a number, an array a Float32Array), so an argument
// cannot change, or detach, another between its check and its use; the one exception, the
// geometry array's elements, is read before the arrays (patches.cc).
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

namespace tfjs_accumulate {

// Throws a TypeError naming the function, unless JavaScript already threw (a getter of an
// argument): throwing again with an exception pending is a fatal error, it aborts the process.
inline bool Fail(Napi::Env env, const char* owner, const std::string& message) {
  if (env.IsExceptionPending()) return false;
  Napi::TypeError::New(env, std::string("tfjs-accumulate native ") + owner + ": " + message).ThrowAsJavaScriptException();
  return false;
}

// True (after throwing) when `info` does not hold exactly `count` arguments.
inline bool WrongCount(const Napi::CallbackInfo& info, const char* owner, size_t count, const char* names) {
  if (info.Length() == count) return false;
  Fail(info.Env(), owner, "expected " + std::to_string(count) + " arguments" + (count == 0 ? std::string() : std::string(" (") + names + ")") + ", got " + std::to_string(info.Length()));
  return true;
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
