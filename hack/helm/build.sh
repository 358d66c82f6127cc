#!/usr/bin/env bash
# Builds (or reuses) the `helm` binary the chart is tested with.
#
# The machine reaches the Go module proxy but no release downloads, so Helm is built from the
# module helm.sh/helm/v4 as a tool of a tiny wrapper module (go/): its go.mod pins the release
# and go.sum every dependency, so every build is the same. To move to another release: change
# the `require helm.sh/helm/v4` line of go/go.mod, run `go mod tidy` in go/, commit.
#
# Usage:
#   hack/helm/build.sh                  build into the cache, or do nothing if it is there
#   hack/helm/build.sh --print-path     the path of the binary (built or not)
# Environment:
#   SPA_HELM              use this helm binary instead of building (only checked)
#   SPA_HELM_CACHE        cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/helm)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODULE="${HERE}/go"
VERSION="$(awk '$1 == "helm.sh/helm/v4" { print $2 }' "${MODULE}/go.mod")"
[[ -n "${VERSION}" ]] || { echo "[helm] no helm.sh/helm/v4 requirement in ${MODULE}/go.mod" >&2; exit 1; }
CACHE_ROOT="${SPA_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/helm}"
BIN="${CACHE_ROOT}/${VERSION}/bin/helm"

export GOTOOLCHAIN=local
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:${PATH}"
fi

log() { printf '[helm] %s\n' "$*" >&2; }

case "${1:-}" in
  --print-path) echo "${SPA_HELM:-${BIN}}"; exit 0 ;;
  "") ;;
  *) log "unknown argument: $1"; exit 2 ;;
esac

if [[ -n "${SPA_HELM:-}" ]]; then
  [[ -x "${SPA_HELM}" ]] || { log "SPA_HELM=${SPA_HELM} is not an executable"; exit 1; }
  log "using SPA_HELM=${SPA_HELM}"
  exit 0
fi
if [[ -x "${BIN}" ]]; then
  log "helm ${VERSION} present: ${BIN}"
  exit 0
fi
command -v go >/dev/null 2>&1 || { log "Go is needed to build helm (or set SPA_HELM)"; exit 1; }

# What Helm's own Makefile sets for a tagged build, so `helm version` reports the release.
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=${VERSION}"
ldflags+=" -X helm.sh/helm/v4/internal/version.metadata="
ldflags+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
mkdir -p "$(dirname "${BIN}")"
# Built beside the target and moved into place, so an interrupted build leaves nothing behind.
tmp="$(mktemp "${BIN}.XXXXXX")"
trap 'rm -f "${tmp}"' EXIT
start=${SECONDS}
log "building helm ${VERSION} from the module proxy"
(cd "${MODULE}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${tmp}" helm.sh/helm/v4/cmd/helm)
mv -f "${tmp}" "${BIN}"
log "built in $((SECONDS - start))s -> ${BIN}"
"${BIN}" version >&2
