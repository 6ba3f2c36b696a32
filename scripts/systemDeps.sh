#!/usr/bin/env bash
# Installs the Debian packages that the notebook tests need, only those that are missing:
# Chromium for the browser tests, Jupyter (nbconvert, nbclient, jupyter_client, ipykernel for
# /usr/bin/python3) to execute the notebooks through the tslab kernel, and the classic Notebook
# front end that a reader opens them in, the JupyterLab server (jupyterlab-server on
# jupyter-server; `npm run lab` serves the front end of lab/ with it), Noto CJK so that Chromium
# draws the Chinese edition with real glyphs, and libopenblas-dev, the CBLAS (headers and
# libopenblas.so) that the optional native kernels (native/, built by `npm run native:build`)
# link against, and python3-torch, the PyTorch that chapter 9's model is checked against
# (test/scripts/lm/tinyGptTorch.test.ts: 10 AdamW updates of the same numbers). Safe to run repeatedly.
set -euo pipefail

# package  what proves it is there
checks=(
  "chromium|test -x /usr/bin/chromium"
  "jupyter-nbconvert|/usr/bin/python3 -c 'import nbconvert'"
  "python3-nbclient|/usr/bin/python3 -c 'import nbclient'"
  "python3-jupyter-client|/usr/bin/python3 -c 'import jupyter_client'"
  "python3-ipykernel|/usr/bin/python3 -c 'import ipykernel'"
  "jupyter-notebook|test -x /usr/bin/jupyter-notebook"
  "python3-jupyterlab-server|/usr/bin/python3 -c 'import jupyterlab_server'"
  "fonts-noto-cjk|test -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
  "libopenblas-dev|dpkg -s libopenblas-dev"
  "python3-torch|/usr/bin/python3 -c 'import torch'"
)

source "$(dirname "$0")/aptInstall.sh"
apt_install_missing systemDeps "" "${checks[@]}"
