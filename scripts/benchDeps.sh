#!/usr/bin/env bash
# Installs the Debian packages that `npm run bench` needs for its PyTorch peer, only those that
# are missing: python3-torch (the peer itself), libopenblas0-pthread (the BLAS it is measured with:
# without it, apt's --no-install-recommends leaves torch on the reference BLAS, ~7 GFLOP/s, which
# would flatter us) and python3-threadpoolctl (to read back how many threads OpenBLAS was given,
# so that the bench can print it verified).
# Safe to run repeatedly; `npm run bench` runs it first.
set -euo pipefail

# package  what proves it is there
checks=(
  "python3-torch|/usr/bin/python3 -c 'import torch'"
  "libopenblas0-pthread|ls /usr/lib/*/openblas-pthread/libblas.so.3"
  "python3-threadpoolctl|/usr/bin/python3 -c 'import threadpoolctl'"
)

missing=()
for check in "${checks[@]}"; do
  package="${check%%|*}"
  if ! bash -c "${check#*|}" >/dev/null 2>&1; then missing+=("$package"); fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "benchDeps: python3-torch, libopenblas0-pthread and python3-threadpoolctl are installed." >&2
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo)
  else
    echo "benchDeps: missing Debian packages: ${missing[*]}." >&2
    echo "benchDeps: installing them needs root; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    echo "benchDeps: or run the bench without its PyTorch peer: npm run bench -- --no-torch" >&2
    exit 1
  fi
fi

echo "benchDeps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update >&2
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2
