#!/usr/bin/env bash
# Installs the Debian packages that the notebook tests need, only those that are missing:
# Chromium for the browser tests, Jupyter (nbconvert, nbclient, jupyter_client, ipykernel for
# /usr/bin/python3) to execute the notebooks through the tslab kernel, and the classic Notebook
# front end that a reader opens them in, and Noto CJK so that Chromium draws the Chinese edition
# with real glyphs. Safe to run repeatedly.
set -euo pipefail

# package  what proves it is there
checks=(
  "chromium|test -x /usr/bin/chromium"
  "jupyter-nbconvert|/usr/bin/python3 -c 'import nbconvert'"
  "python3-nbclient|/usr/bin/python3 -c 'import nbclient'"
  "python3-jupyter-client|/usr/bin/python3 -c 'import jupyter_client'"
  "python3-ipykernel|/usr/bin/python3 -c 'import ipykernel'"
  "jupyter-notebook|test -x /usr/bin/jupyter-notebook"
  "fonts-noto-cjk|test -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
)

missing=()
for check in "${checks[@]}"; do
  package="${check%%|*}"
  if ! bash -c "${check#*|}" >/dev/null 2>&1; then missing+=("$package"); fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "systemDeps: chromium, Jupyter (nbconvert, nbclient, jupyter_client, ipykernel, classic Notebook) and fonts-noto-cjk are installed."
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo)
  else
    echo "systemDeps: missing Debian packages: ${missing[*]}." >&2
    echo "systemDeps: installing them needs root; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

echo "systemDeps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
