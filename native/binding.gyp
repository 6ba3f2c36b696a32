# The optional native kernels: one N-API addon calling the system CBLAS (OpenBLAS on Linux,
# Accelerate on macOS). Built by native/build.js (a user's `npx --no-install
# tfjs-accumulate-build-native`, this repo's `prepare` script, `npm run native:build`); a failed
# build only means the library runs without it. See docs/backends.md and docs/packaging.md.
{
  "targets": [
    {
      "target_name": "tfjs_accumulate_blas",
      "sources": ["blas.cc", "patches.cc", "channels.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags_cc": ["-O3"],
      "conditions": [
        ["OS=='mac'", {
          "libraries": ["-framework Accelerate"],
          "defines": ["TFJS_ACCUMULATE_BLAS_NAME=\"Accelerate\""]
        }, {
          "libraries": ["-lopenblas"],
          "defines": ["TFJS_ACCUMULATE_BLAS_NAME=\"OpenBLAS\""]
        }]
      ]
    }
  ]
}
