#!/usr/bin/env bash
# Installs the Debian packages that `npm run bench` needs for its PyTorch peer, only those that
# are missing: python3-torch (the peer itself), libopenblas0-pthread (the BLAS it is measured with:
# without it, apt's --no-install-recommends leaves torch on the reference BLAS, ~7 GFLOP/s, which
# would flatter us) and python3-threadpoolctl (to read back how many threads OpenBLAS was given,
# so that the bench can print it verified), and libopenblas-dev, the same OpenBLAS for the project's
# optional native kernels (their rows sit beside PyTorch's at equal threads).
# Safe to run repeatedly; `npm run bench` runs it first.
set -euo pipefail

# package  what proves it is there
checks=(
  "python3-torch|/usr/bin/python3 -c 'import torch'"
  "libopenblas0-pthread|ls /usr/lib/*/openblas-pthread/libblas.so.3"
  "python3-threadpoolctl|/usr/bin/python3 -c 'import threadpoolctl'"
  "libopenblas-dev|dpkg -s libopenblas-dev"
)

source "$(dirname "$0")/../aptInstall.sh"
apt_install_missing benchDeps "or run the bench without its PyTorch peer: npm run bench -- --no-torch" "${checks[@]}"
