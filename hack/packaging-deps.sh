#!/usr/bin/env bash
# Installs the tools of the packaging suites (`make test-packaging`) that come from Debian's
# archive: buildah (builds and runs the image without a daemon), mmdebstrap (makes the test base
# images from Debian packages, hack/image/bases.sh) and prometheus (promtool and the server).
# helm is not a Debian package: hack/helm/build.sh builds it. Does nothing when all are there;
# otherwise it needs root (apt-get) and fails on any missing step.
set -euo pipefail

missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
{ command -v promtool && command -v prometheus; } >/dev/null 2>&1 || missing+=(prometheus)
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "[packaging-deps] installing ${missing[*]}" >&2
if [[ "$(id -u)" != 0 ]]; then
  echo "[packaging-deps] root is needed: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# With their recommended packages, as on the machine the suites were measured on (buildah's
# fuse-overlayfs and uidmap, mmdebstrap's arch-test and fakechroot).
apt-get install -y -q "${missing[@]}"
