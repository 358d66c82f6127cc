#!/usr/bin/env bash
# Builds (or reuses) the original Go controller (github.com/d-kuro/scheduled-pod-autoscaler), the
# yardstick of docs/performance.md's memory comparison (bench/original.py).
#
# The Go module proxy refuses that module (`go list -m -versions
# github.com/d-kuro/scheduled-pod-autoscaler`: 403 "This module version is not available"), so
# the source is a checkout of its repository given as SRC; only its dependencies come from the
# module proxy, pinned by its own go.sum. It is a go 1.16 module on controller-runtime 0.8 and
# is built with Go 1.16.15, fetched as hack/testenv fetches the toolchains of old releases.
# The binary is kept per commit (the checkout's `git rev-parse HEAD`, or the name given as REV).
#
# Usage:
#   hack/go-original/build.sh SRC [REV]     build SRC into the cache, or reuse what is there
#   hack/go-original/build.sh --print-path [REV]   the binary's path (built or not)
# Environment:
#   SPA_TESTENV_CACHE   the testenv cache (its toolchains/ are shared; default
#                       ${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/testenv)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${SPA_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/testenv}"
ORIGINAL_CACHE="${CACHE_ROOT%/testenv}/go-original"
# The last commit of the original's repository (2021-06), the one measured in the docs.
DEFAULT_REV=145803d1
TOOLCHAIN=go1.16.15

log() { printf '[go-original] %s\n' "$*" >&2; }
# shellcheck source=../testenv/toolchain.sh
source "${HERE}/../testenv/toolchain.sh"

if [[ "${1:-}" == "--print-path" ]]; then
  echo "${ORIGINAL_CACHE}/${2:-${DEFAULT_REV}}/manager"
  exit 0
fi
SRC="${1:?usage: hack/go-original/build.sh SRC [REV] (a checkout of github.com/d-kuro/scheduled-pod-autoscaler)}"
[[ -f "${SRC}/go.mod" ]] || { log "${SRC} has no go.mod: not a checkout of the original"; exit 1; }
grep -q '^module github.com/d-kuro/scheduled-pod-autoscaler$' "${SRC}/go.mod" \
  || { log "${SRC}/go.mod is not the module github.com/d-kuro/scheduled-pod-autoscaler"; exit 1; }
REV="${2:-$(git -C "${SRC}" rev-parse --short=8 HEAD 2>/dev/null || echo "${DEFAULT_REV}")}"
BIN="${ORIGINAL_CACHE}/${REV}/manager"
if [[ -x "${BIN}" ]]; then
  log "present: ${BIN}"
  exit 0
fi
ensure_toolchain
mkdir -p "${BIN%/*}"
tmp="$(mktemp "${BIN}.XXXXXX")"
trap 'rm -f "${tmp}"' EXIT
start=${SECONDS}
log "building ${SRC} (${REV}) with $(go env GOVERSION)"
# GOFLAGS replaced, not added to: the machine's `go env -w` may set flags Go 1.16 does not know.
(cd "${SRC}" && GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -o "${tmp}" .)
mv -f "${tmp}" "${BIN}"
log "built in $((SECONDS - start))s -> ${BIN}"
