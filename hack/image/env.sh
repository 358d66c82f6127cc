# Sourced by the scripts of hack/image: where the project keeps its container images.
#
#   SPA_CONTAINERS_ROOT   container storage (default ${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/containers);
#                         kept apart from the machine's own storage, and reused between runs
#   SPA_DEBIAN_MIRROR     Debian archive for mmdebstrap (default http://deb.debian.org/debian)
SPA_CONTAINERS_ROOT="${SPA_CONTAINERS_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/containers}"
# Run-time state (locks, mounts) belongs on a file system that does not outlive a boot.
SPA_CONTAINERS_RUNROOT="${SPA_CONTAINERS_RUNROOT:-/run/scheduled-pod-autoscaler/containers}"
SPA_DEBIAN_MIRROR="${SPA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

SPA_BUILDAH=(buildah --root "${SPA_CONTAINERS_ROOT}/storage" --runroot "${SPA_CONTAINERS_RUNROOT}")
spa_buildah() { "${SPA_BUILDAH[@]}" "$@"; }

log() { printf '[image] %s\n' "$*" >&2; }

for tool in buildah mmdebstrap; do
  if ! command -v "${tool}" >/dev/null 2>&1; then
    log "${tool} is missing: apt-get install buildah mmdebstrap (or run hack/system/install.sh test-packaging)"
    exit 1
  fi
done
