// The native half of tfjs-accumulate's optional native kernels: single-precision matrix
// products on the caller's Float32Arrays through the system CBLAS, without copies.
//
// Exports:
//   sgemm(transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, batch, beta)
//     For i < batch: C_i = op(A_i) · op(B_i) + beta · C_i, row-major, A_i at a[i·strideA],
//     B_i at b[i·strideB], C_i at c[i·strideC] (a stride of 0 shares one matrix across the batch).
//     Every matrix is bounds-checked against its array before CBLAS reads or writes it.
//   info() -> { blas, config, corename, threads, parallel }
//   setThreads(n) -> the thread count the BLAS reports afterwards (null when it cannot be set).
//   im2col, col2im: the convolution lowering (patches.cc).
//   channelSums, channelBinary: per-channel reductions and broadcasts (channels.cc).
//
// The OpenBLAS extras (openblas_get_config, ...) are looked up with dlsym, so the same source
// links against any CBLAS (Accelerate has none of them; info() then reports nulls). The CBLAS
// prototype is declared here rather than taken from <cblas.h> because distributions put that
// header in different places (/usr/include/x86_64-linux-gnu, /usr/include/openblas, ...); the
// enum values are fixed by the CBLAS standard.
#include <napi.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

#include "args.h"
#include "channels.h"
#include "patches.h"

extern "C" void cblas_sgemm(int order, int transA, int transB, int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc);

namespace {

constexpr int kRowMajor = 101;
constexpr int kNoTrans = 111;
constexpr int kTrans = 112;

#ifndef TFJS_ACCUMULATE_BLAS_NAME
#define TFJS_ACCUMULATE_BLAS_NAME "CBLAS"
#endif

template <typename F>
F Lookup(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

// The sgemm binding's error prefix (args.h).
constexpr const char* kOwner = "sgemm";

bool Fail(Napi::Env env, const std::string& message) { return tfjs_accumulate::Fail(env, kOwner, message); }

bool ReadInt(const Napi::CallbackInfo& info, size_t i, const char* name, int64_t* out) { return tfjs_accumulate::ReadInt(info, i, kOwner, name, out); }

bool ReadArray(const Napi::CallbackInfo& info, size_t i, const char* name, Napi::Float32Array* out) {
  return tfjs_accumulate::ReadArray(info, i, kOwner, name, out);
}

// True when `batch` matrices of rows x cols with leading dimension ld, `stride` apart, fit in
// an array of `length` elements, and ld is one CBLAS accepts (at least the row length, and 1):
// OpenBLAS reports a bad one on stderr and skips the product, leaving the output as it was.
bool Fits(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch, int64_t length) {
  if (ld < cols || ld < 1) return false;
  if (rows == 0 || cols == 0 || batch == 0) return true;
  int64_t last = (batch - 1) * stride + (rows - 1) * ld + cols;
  return last <= length;
}

Napi::Value Sgemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (tfjs_accumulate::WrongCount(info, kOwner, 16, "transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, batch, beta")) return env.Undefined();
  if (!info[0].IsBoolean() || !info[1].IsBoolean()) {
    Fail(env, "transA and transB must be booleans");
    return env.Undefined();
  }
  bool transA = info[0].As<Napi::Boolean>().Value();
  bool transB = info[1].As<Napi::Boolean>().Value();
  int64_t m, n, k, lda, strideA, ldb, strideB, ldc, strideC, batch;
  Napi::Float32Array a, b, c;
  if (!ReadInt(info, 2, "m", &m) || !ReadInt(info, 3, "n", &n) || !ReadInt(info, 4, "k", &k) ||
      !ReadArray(info, 5, "a", &a) || !ReadInt(info, 6, "lda", &lda) || !ReadInt(info, 7, "strideA", &strideA) ||
      !ReadArray(info, 8, "b", &b) || !ReadInt(info, 9, "ldb", &ldb) || !ReadInt(info, 10, "strideB", &strideB) ||
      !ReadArray(info, 11, "c", &c) || !ReadInt(info, 12, "ldc", &ldc) || !ReadInt(info, 13, "strideC", &strideC) ||
      !ReadInt(info, 14, "batch", &batch)) {
    return env.Undefined();
  }
  if (!info[15].IsNumber()) {
    Fail(env, "beta must be a number");
    return env.Undefined();
  }
  float beta = info[15].As<Napi::Number>().FloatValue();
  // Stored shapes: op(A) is m x k, so A is stored k x m when transposed.
  int64_t aRows = transA ? k : m, aCols = transA ? m : k;
  int64_t bRows = transB ? n : k, bCols = transB ? k : n;
  if (!Fits(aRows, aCols, lda, strideA, batch, a.ElementLength())) {
    Fail(env, "a is too short for its matrices (or lda is below its row length, or 0)");
    return env.Undefined();
  }
  if (!Fits(bRows, bCols, ldb, strideB, batch, b.ElementLength())) {
    Fail(env, "b is too short for its matrices (or ldb is below its row length, or 0)");
    return env.Undefined();
  }
  if (!Fits(m, n, ldc, strideC, batch, c.ElementLength())) {
    Fail(env, "c is too short for its matrices (or ldc is below its row length, or 0)");
    return env.Undefined();
  }
  if (batch > 1 && strideC < m * ldc && m > 0 && n > 0) {
    Fail(env, "strideC must keep the output matrices apart");
    return env.Undefined();
  }
  const float* pa = a.Data();
  const float* pb = b.Data();
  float* pc = c.Data();
  auto ld = [](int64_t v) { return static_cast<int>(v); };
  for (int64_t i = 0; i < batch; i++) {
    if (m == 0 || n == 0) break;
    cblas_sgemm(kRowMajor, transA ? kTrans : kNoTrans, transB ? kTrans : kNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, pa + i * strideA, ld(lda), pb + i * strideB, ld(ldb), beta, pc + i * strideC, ld(ldc));
  }
  return env.Undefined();
}

Napi::Value NullableString(Napi::Env env, const char* (*f)()) {
  if (f == nullptr) return env.Null();
  const char* s = f();
  return s == nullptr ? env.Null() : Napi::String::New(env, s);
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (tfjs_accumulate::WrongCount(info, "info", 0, "")) return env.Undefined();
  auto getConfig = Lookup<const char* (*)()>("openblas_get_config");
  auto getCorename = Lookup<const char* (*)()>("openblas_get_corename");
  auto getThreads = Lookup<int (*)()>("openblas_get_num_threads");
  auto getParallel = Lookup<int (*)()>("openblas_get_parallel");
  Napi::Object out = Napi::Object::New(env);
  out.Set("blas", Napi::String::New(env, getConfig ? "OpenBLAS" : TFJS_ACCUMULATE_BLAS_NAME));
  out.Set("config", NullableString(env, getConfig));
  out.Set("corename", NullableString(env, getCorename));
  out.Set("threads", getThreads ? Napi::Value(Napi::Number::New(env, getThreads())) : env.Null());
  // 0: single-threaded build, 1: pthreads, 2: OpenMP.
  out.Set("parallel", getParallel ? Napi::Value(Napi::Number::New(env, getParallel())) : env.Null());
  return out;
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int64_t n;
  const char* owner = "setThreads";
  if (tfjs_accumulate::WrongCount(info, owner, 1, "threads") || !tfjs_accumulate::ReadInt(info, 0, owner, "threads", &n)) return env.Undefined();
  // Never more threads than cores (the library's rule, checkNativeThreads), and never a count
  // OpenBLAS would try to start threads for.
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  if (n < 1 || n > cores) {
    tfjs_accumulate::Fail(env, owner, "threads must be an integer from 1 to " + std::to_string(cores) + " (this machine's cores)");
    return env.Undefined();
  }
  auto setThreads = Lookup<void (*)(int)>("openblas_set_num_threads");
  auto getThreads = Lookup<int (*)()>("openblas_get_num_threads");
  if (setThreads == nullptr || getThreads == nullptr) return env.Null();
  setThreads(static_cast<int>(n));
  return Napi::Number::New(env, getThreads());
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("sgemm", Napi::Function::New(env, Sgemm));
  exports.Set("info", Napi::Function::New(env, Info));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads));
  tfjs_accumulate::RegisterPatches(env, exports);
  tfjs_accumulate::RegisterChannels(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(tfjs_accumulate_blas, Init)
