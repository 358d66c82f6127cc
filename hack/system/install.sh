#!/usr/bin/env bash
# Installs the Debian packages a make target needs (hack/system/packages), when missing.
# One helper for `make test`, `make test-reliability`, the packaging targets and .ci/run, so
# that a newcomer's first `make test` needs what CI needs and nothing is installed by hand.
#
# Usage: hack/system/install.sh TARGET...   the packages of those make targets
#        hack/system/install.sh --all       every package of the table (.ci/run)
#        hack/system/install.sh --list [TARGET...]  print the package names, install nothing
#
# Nothing to do: exits 0 at once, without root. Otherwise it runs apt-get as root; without
# root, or on a machine without apt-get, it stops at once with the exact command to run,
# rather than letting a test fail minutes later on a missing tool.
set -euo pipefail

TABLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/packages"

list=0
if [[ "${1:-}" == --list ]]; then
  list=1
  shift
fi
if (($# == 0)) && ((!list)); then
  echo "usage: $0 TARGET... | --all | --list [TARGET...]" >&2
  exit 2
fi

wanted=() missing=()
while read -r package target probe; do
  [[ -z "${package}" || "${package}" == \#* ]] && continue
  if (($# > 0)) && [[ "$1" != --all && " $* " != *" ${target} "* ]]; then
    continue
  fi
  wanted+=("${package}")
  if [[ "${probe}" == /* ]]; then
    [[ -e "${probe}" ]] || missing+=("${package}")
  else
    command -v "${probe}" >/dev/null 2>&1 || missing+=("${package}")
  fi
done <"${TABLE}"

if ((list)); then
  printf '%s\n' "${wanted[@]}"
  exit 0
fi
if ((${#missing[@]} == 0)); then
  exit 0
fi
command="apt-get install -y ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "[system] missing: ${missing[*]} (Debian package names); this machine has no apt-get:" \
    "install them with its package manager (docs/development.md, \"Prerequisites\")" >&2
  exit 1
fi
if [[ "$(id -u)" != 0 ]]; then
  echo "[system] missing Debian packages; run as root, then make again:" >&2
  echo "  sudo apt-get update && sudo ${command}" >&2
  exit 1
fi
echo "[system] installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"
