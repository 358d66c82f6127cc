#!/usr/bin/env bash
# Makes the two base images the Dockerfile names by default, from Debian packages, for building
# and testing the image on a machine that cannot pull public images (no registry is reachable
# here, only Debian's package archive):
#
#   build stage    docker.io/library/debian:bookworm-slim       -> mmdebstrap minbase of bookworm,
#                  with the docs, manuals and locales left out as bookworm-slim does
#   runtime stage  gcr.io/distroless/python3-debian12:nonroot   -> the same Debian 12 packages of
#                  Python 3.11 that image is made of, extracted without a shell, apt or dpkg,
#                  and its user nonroot (65532)
#
# Each is imported into the project's container storage as localhost/spa-test-base/NAME:HASH,
# HASH being the hash of this script, so a changed recipe makes new images and an unchanged one
# is reused. Prints the two image names (build, then runtime), one a line.
#
# Usage: hack/image/bases.sh
# Environment: see hack/image/env.sh (storage location, Debian mirror).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=hack/image/env.sh
source "${HERE}/env.sh"

RECIPE="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
BUILD_BASE="localhost/spa-test-base/debian:bookworm-slim-${RECIPE}"
RUNTIME_BASE="localhost/spa-test-base/python3-debian12:nonroot-${RECIPE}"
SUITE=bookworm

# What bookworm-slim leaves out (dpkg path excludes), applied to the build base.
SLIM_EXCLUDES=(
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/lintian/*'
)

# The runtime base: Python 3.11 of Debian 12 and the libraries it needs, unpacked (their
# maintainer scripts never run). The packages' dependencies bring a few programs along (dpkg,
# tar, mawk, debconf): like distroless, the image keeps no program but the interpreter.
RUNTIME_PACKAGES=base-files,netbase,tzdata,python3.11-minimal,libpython3.11-stdlib

# The user and group distroless images define; /tmp as every image has it; no documentation.
customize_runtime() {
  local root="$1"
  find "${root}/usr/bin" "${root}/usr/sbin" -mindepth 1 -maxdepth 1 ! -name python3.11 -exec rm -rf {} +
  ln -s python3.11 "${root}/usr/bin/python3"
  rm -rf "${root}"/usr/share/{perl5,debconf} "${root}"/var/lib/dpkg
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"${root}/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"${root}/etc/group"
  mkdir -p "${root}/home/nonroot" "${root}/tmp"
  chown 65532:65532 "${root}/home/nonroot"
  chmod 1777 "${root}/tmp"
  rm -rf "${root}"/usr/share/{doc,man,info,locale,lintian} "${root}"/var/cache/* "${root}"/var/lib/apt
}
have_image() { spa_buildah inspect --type image "$1" >/dev/null 2>&1; }

import_tree() {
  local tree="$1" image="$2" container
  tar -C "${tree}" -cf "${tree}.tar" .
  container="$(spa_buildah from scratch)"
  spa_buildah add "${container}" "${tree}.tar" / >/dev/null
  spa_buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${container}"
  spa_buildah commit --quiet "${container}" "${image}" >/dev/null
  spa_buildah rm "${container}" >/dev/null
}

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

if ! have_image "${BUILD_BASE}"; then
  log "making ${BUILD_BASE} with mmdebstrap"
  mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    "${SLIM_EXCLUDES[@]}" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "${SUITE}" "${work}/build" "${SPA_DEBIAN_MIRROR}"
  import_tree "${work}/build" "${BUILD_BASE}"
fi
if ! have_image "${RUNTIME_BASE}"; then
  log "making ${RUNTIME_BASE} with mmdebstrap"
  mmdebstrap --quiet --variant=extract --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include="${RUNTIME_PACKAGES}" "${SUITE}" "${work}/runtime" "${SPA_DEBIAN_MIRROR}"
  customize_runtime "${work}/runtime"
  import_tree "${work}/runtime" "${RUNTIME_BASE}"
fi
# Images of earlier recipes only take space.
spa_buildah images --format '{{.Name}}:{{.Tag}}' | grep '^localhost/spa-test-base/' \
  | grep -v -- "-${RECIPE}\$" | xargs -r -n1 "${SPA_BUILDAH[@]}" rmi >/dev/null 2>&1 || true
echo "${BUILD_BASE}"
echo "${RUNTIME_BASE}"
