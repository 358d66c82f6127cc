#!/usr/bin/env bash
# Builds (or reuses) the `krew` binary the plugin manifest (plugins/spa.yaml) is tested with, and
# `validate-krew-manifest`, the check the krew-index repository runs on every manifest it takes.
#
# The machine reaches the Go module proxy but no release downloads, so krew is built from the
# module sigs.k8s.io/krew as a tool of a tiny wrapper module (go/): its go.mod pins the release
# and go.sum every dependency, so every build is the same. To move to another release: change
# the `require sigs.k8s.io/krew` line of go/go.mod, run `go mod tidy` in go/, commit.
#
# Usage:
#   hack/krew/build.sh                  build into the cache, or do nothing if it is there
#   hack/krew/build.sh --print-path     the path of the krew binary (built or not); the validator
#                                       is beside it
# Environment:
#   SPA_KREW              use this krew binary (and the validate-krew-manifest beside it) instead
#                         of building (only checked)
#   SPA_KREW_CACHE        cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/krew)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODULE="${HERE}/go"
VERSION="$(awk '$1 == "sigs.k8s.io/krew" { print $2 }' "${MODULE}/go.mod")"
[[ -n "${VERSION}" ]] || { echo "[krew] no sigs.k8s.io/krew requirement in ${MODULE}/go.mod" >&2; exit 1; }
CACHE_ROOT="${SPA_KREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/krew}"
BIN="${CACHE_ROOT}/${VERSION}/bin/krew"

export GOTOOLCHAIN=local
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:${PATH}"
fi

log() { printf '[krew] %s\n' "$*" >&2; }

case "${1:-}" in
  --print-path) echo "${SPA_KREW:-${BIN}}"; exit 0 ;;
  "") ;;
  *) log "unknown argument: $1"; exit 2 ;;
esac

if [[ -n "${SPA_KREW:-}" ]]; then
  for tool in "${SPA_KREW}" "$(dirname "${SPA_KREW}")/validate-krew-manifest"; do
    [[ -x "${tool}" ]] || { log "SPA_KREW=${SPA_KREW}: ${tool} is not an executable"; exit 1; }
  done
  log "using SPA_KREW=${SPA_KREW}"
  exit 0
fi
if [[ -x "${BIN}" && -x "${BIN%/*}/validate-krew-manifest" ]]; then
  log "krew ${VERSION} present: ${BIN}"
  exit 0
fi
command -v go >/dev/null 2>&1 || { log "Go is needed to build krew (or set SPA_KREW)"; exit 1; }

# What krew's own release build stamps, so `krew version` reports the release (an unstamped
# build counts as a development build).
ldflags="-s -w -X sigs.k8s.io/krew/internal/version.gitTag=${VERSION}"
ldflags+=" -X sigs.k8s.io/krew/internal/version.gitCommit=${VERSION}"
mkdir -p "$(dirname "${BIN}")"
# Built beside the targets and moved into place, so an interrupted build leaves nothing behind.
tmp="$(mktemp -d "${BIN}.XXXXXX")"
# `krew version` creates its directories under KREW_ROOT (~/.krew by default): a throwaway one.
root="$(mktemp -d)"
trap 'rm -rf "${tmp}" "${root}"' EXIT
start=${SECONDS}
log "building krew ${VERSION} from the module proxy"
(cd "${MODULE}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${tmp}/" \
  sigs.k8s.io/krew/cmd/krew sigs.k8s.io/krew/cmd/validate-krew-manifest)
mv -f "${tmp}/validate-krew-manifest" "${BIN%/*}/"
mv -f "${tmp}/krew" "${BIN}"
log "built in $((SECONDS - start))s -> ${BIN}"
KREW_ROOT="${root}" KREW_NO_UPGRADE_CHECK=1 "${BIN}" version >&2
