#!/usr/bin/env bash
# Sourced by scripts/systemDeps.sh and scripts/bench/benchDeps.sh: installs, from Debian's archive, the
# packages of a list whose check fails, and only those, as root or with passwordless sudo.
#
#   apt_install_missing NAME HINT "package|command that proves it is there" ...
#
# NAME prefixes every message; HINT is printed after the root instructions when installing is
# impossible (may be empty). Returns 0 when everything is there (installed now or before), 1 when
# packages are missing and cannot be installed. Messages go to stderr, so that a caller's stdout
# stays its own.
apt_install_missing() {
  local name=$1 hint=$2
  shift 2
  local missing=() check package
  for check in "$@"; do
    package="${check%%|*}"
    if ! bash -c "${check#*|}" >/dev/null 2>&1; then missing+=("$package"); fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    local names=()
    for check in "$@"; do names+=("${check%%|*}"); done
    echo "$name: ${names[*]} installed." >&2
    return 0
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo)
    else
      echo "$name: missing Debian packages: ${missing[*]}." >&2
      echo "$name: installing them needs root; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
      if [ -n "$hint" ]; then echo "$name: $hint" >&2; fi
      return 1
    fi
  fi
  echo "$name: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2
}
