#!/usr/bin/env bash
# Builds (or reuses) the real control-plane binaries the integration tests run:
# etcd, etcdctl, kube-apiserver and kube-controller-manager of pinned Kubernetes releases, and
# for the default release also kube-scheduler and kwok (pinned in KWOK_VERSION), which fakes
# nodes and runs the pod lifecycle without containers so that scheduled pods become Ready.
#
# Why from source with `go build`: the machine has no Docker and no route to the release
# buckets, only to the Go module proxy. k8s.io/kubernetes is built as a plain dependency of a
# tiny wrapper module (go/<release>/kubernetes), the etcd server of another
# (go/<release>/etcd); both wrapper go.mod/go.sum files are generated from the release's own
# go.mod by `build.sh --update` and committed, so every build uses exactly the pinned module
# versions. Each release is built with the Go toolchain it was released with (the `releases`
# table), fetched from the module proxy as the module golang.org/toolchain: old releases do
# not build, or build subtly broken, with a newer Go. Releases before 1.27 did not commit their
# generated OpenAPI definitions; build.sh generates them as the release's own Makefile did.
# kwok is a wrapper of its own (go/kwok) around sigs.k8s.io/kwok, whose go.mod pins its
# dependencies; it is built with the installed Go whatever the release (it needs Go 1.26).
#
# The nodes' binaries (kube-scheduler, kwok) are built for the default release, which the
# tests with pods use, and for another release only with --nodes: the compatibility suite
# (tests/compat) runs no pods, and kwok is tried only against the default release
# (docs/development.md, "Nodes on other releases").
#
# Usage:
#   hack/testenv/build.sh [RELEASE...]        build into the cache, or do nothing if the binaries exist
#   hack/testenv/build.sh --nodes RELEASE...  the same, with kube-scheduler and kwok for every release named
#   hack/testenv/build.sh --all               every release of the `releases` table, one at a time
#   hack/testenv/build.sh --update [RELEASE...]  regenerate the wrapper modules of those releases and kwok's
#   hack/testenv/build.sh --print-bin-dir [RELEASE]
#   hack/testenv/build.sh --list              the releases of the table, one a line
#   hack/testenv/build.sh --cached            those whose binaries are in the cache
# RELEASE defaults to SPA_TESTENV_VERSION, else hack/testenv/VERSION (the default release).
# Environment:
#   SPA_TESTENV_VERSION   the release to use when none is named (default: hack/testenv/VERSION)
#   SPA_TESTENV_BIN_DIR   use the binaries in this directory instead of building (only checked)
#   SPA_TESTENV_CACHE     cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/testenv)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RELEASES_FILE="${HERE}/releases"
# The default release (`make test`); every release is a line of RELEASES_FILE.
DEFAULT_VERSION="$(tr -d '[:space:]' <"${HERE}/VERSION")"
# kwok is versioned on its own (it speaks to the API server like any client); its binary still
# lives beside the release's binaries, so that one directory holds one complete test plane.
KWOK_VERSION="$(tr -d '[:space:]' <"${HERE}/KWOK_VERSION")"
KWOK_MOD="${HERE}/go/kwok"
CACHE_ROOT="${SPA_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduled-pod-autoscaler/testenv}"
# Every release's control plane (what tests/compat needs).
BINARIES=(etcd etcdctl kube-apiserver kube-controller-manager)
# The nodes: the default release's, and another's with --nodes.
NODE_BINARIES=(kube-scheduler kwok)
# What `make test` needs (etcdctl is a convenience); setup-envtest's directories lack the last three.
REQUIRED=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# Keep the module and build caches in Go's default places so later sessions reuse them.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:${PATH}"
fi
# A go env file may hold flags an old toolchain does not know (go1.16 stops at -buildvcs);
# GOFLAGS from the environment replaces it, and -mod=readonly (known to every toolchain used
# here) keeps a build from ever changing the committed wrapper modules.
export GOFLAGS=-mod=readonly

log() { printf '[testenv] %s\n' "$*" >&2; }

have_all() {
  local dir="$1" b
  shift
  for b in "$@"; do
    [[ -x "${dir}/${b}" ]] || return 1
  done
}

list_releases() { awk '!/^#/ && NF { print $1 }' "${RELEASES_FILE}"; }

# Sets RELEASE, TOOLCHAIN, ETCD_PIN, OVERRIDES, ETCD_OVERRIDES, BIN_DIR, K_MOD and E_MOD for one release of the
# table, and puts the release's Go toolchain first on PATH for every go command below.
select_release() {
  RELEASE="$1"
  local row
  row="$(awk -v r="${RELEASE}" '!/^#/ && $1 == r { print $2, $3, $4, ($5 == "" ? "-" : $5); exit }' "${RELEASES_FILE}")"
  if [[ -z "${row}" ]]; then
    log "${RELEASE} is not in ${RELEASES_FILE} (known: $(list_releases | tr '\n' ' '))"
    exit 2
  fi
  read -r TOOLCHAIN ETCD_PIN OVERRIDES ETCD_OVERRIDES <<<"${row}"
  [[ "${OVERRIDES}" != "-" ]] || OVERRIDES=""
  [[ "${ETCD_OVERRIDES}" != "-" ]] || ETCD_OVERRIDES=""
  BIN_DIR="${CACHE_ROOT}/${RELEASE}/bin"
  K_MOD="${HERE}/go/${RELEASE}/kubernetes"
  E_MOD="${HERE}/go/${RELEASE}/etcd"
  ensure_toolchain
}

# ensure_toolchain: hack/testenv/toolchain.sh (hack/go-original/build.sh uses it too).
source "${HERE}/toolchain.sh"

# A file that makes `go mod tidy` keep the commands' dependencies (the build tag keeps it out of
# every build). The `tool` directive would do the same but needs go 1.24; old toolchains don't
# know it.
write_tools_go() {
  local file="$1" header="$2"
  shift 2
  {
    echo "${header}"
    echo
    echo "//go:build tools"
    echo "// +build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    local pkg
    for pkg in "$@"; do echo "	_ \"${pkg}\""; done
    echo ")"
  } >"${file}"
}

# Reads the release's go.mod from the module cache and writes both wrapper modules.
update_modules() {
  local json gomod dir minor etcd_version staging pinned
  log "resolving k8s.io/kubernetes@${RELEASE} through the module proxy (Go ${TOOLCHAIN})"
  mkdir -p "${K_MOD}" "${E_MOD}"
  json="$(cd "${K_MOD}" && go mod download -json "k8s.io/kubernetes@${RELEASE}")"
  gomod="$(sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p' <<<"${json}")"
  dir="$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"${json}")"
  [[ -f "${gomod}" && -d "${dir}" ]] || { log "cannot find go.mod of k8s.io/kubernetes@${RELEASE}"; exit 1; }
  # Staging modules (k8s.io/api, k8s.io/apiserver, ...) are required at v0.0.0 and replaced by
  # ./staging paths, which a dependency cannot use; their published twins are v0.<minor>.<patch>.
  minor="v0.${RELEASE#v1.}"
  staging="$(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }' "${gomod}" | sort -u)"
  [[ -n "${staging}" ]] || { log "no staging modules found in ${gomod}"; exit 1; }
  # Releases before 1.26 or so pin every dependency with a replace directive (their vendor/
  # is built from them). A dependency's replaces are ignored, so the wrapper repeats those that
  # name a module version (not a ./staging path): the build then uses what the release shipped.
  pinned="$(awk '
    /^replace \($/ { block = 1; next }
    block && /^\)$/ { block = 0; next }
    block || /^replace / {
      sub(/^replace /, "")
      if ($2 == "=>" && NF == 4 && $3 !~ /^\.\.?\//) printf "\t%s => %s %s\n", $1, $3, $4
    }' "${gomod}")"
  # The etcd the release is tested with (build/dependencies.yaml, entry "etcd"), unless the
  # releases table names another one.
  if [[ "${ETCD_PIN}" == "release" ]]; then
    etcd_version="v$(awk '/- name: "etcd"$/ { found = 1; next } found && /version:/ { print $2; exit }' "${dir}/build/dependencies.yaml")"
    [[ "${etcd_version}" != "v" ]] || { log "cannot read the etcd version from build/dependencies.yaml"; exit 1; }
  else
    etcd_version="${ETCD_PIN}"
  fi
  # The table's replacements win over the release's own pins (and over staging's v0.Y.Z).
  # staged: "module version" of every staging module as the wrapper will resolve it.
  local override module staged
  staged="$(sed "s/\$/ ${minor}/" <<<"${staging}")"
  for override in ${OVERRIDES//,/ }; do
    module="${override%%=*}"
    pinned="$(awk -v m="${module}" '$1 != m' <<<"${pinned}")"
    staging="$(awk -v m="${module}" '$1 != m' <<<"${staging}")"
    staged="$(awk -v m="${module}" -v v="${override#*=}" '$1 == m { $2 = v } { print }' <<<"${staged}")"
    pinned+=$'\n'"	${module} => ${module} ${override#*=}"
  done
  log "staging modules -> ${minor}; $(grep -c . <<<"${pinned}" || true) pinned dependencies; etcd ${etcd_version}"

  local header="// Code generated by hack/testenv/build.sh --update from k8s.io/kubernetes@${RELEASE}. DO NOT EDIT."
  {
    echo "${header}"
    echo
    echo "// Wrapper that builds the control plane of k8s.io/kubernetes as a dependency."
    echo "module scheduled-pod-autoscaler/hack/testenv/go/${RELEASE}/kubernetes"
    echo
    # Same language version and GODEBUG defaults as the release itself.
    sed -n 's/^go \(.*\)$/go \1/p' "${gomod}"
    echo
    sed -n '/^godebug /p' "${gomod}"
    echo
    echo "require k8s.io/kubernetes ${RELEASE}"
    echo
    echo "replace ("
    while read -r m; do echo "	${m} => ${m} ${minor}"; done <<<"${staging}"
    [[ -z "${pinned}" ]] || echo "${pinned}"
    echo ")"
  } >"${K_MOD}/go.mod"
  write_tools_go "${K_MOD}/tools.go" "${header}" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler
  rm -f "${K_MOD}/openapi.go"
  if [[ ! -f "${dir}/pkg/generated/openapi/zz_generated.openapi.go" ]]; then
    # The generator and every package the generated definitions import: `go mod tidy` then
    # pins them too, and build.sh reads the input packages back from this file.
    log "the release has no generated OpenAPI definitions: finding openapi-gen's input packages"
    # shellcheck disable=SC2046
    write_tools_go "${K_MOD}/openapi.go" "${header}
//
// openapi-gen and its input packages (build.sh: generate_openapi)." \
      k8s.io/kube-openapi/cmd/openapi-gen $(openapi_inputs "${dir}" "${staged}")
  fi
  rm -f "${K_MOD}/go.sum"
  (cd "${K_MOD}" && GOFLAGS=-mod=mod go mod tidy)

  {
    echo "${header}"
    echo
    echo "// Wrapper that builds the etcd server and etcdctl that the Kubernetes release is tested with."
    echo "module scheduled-pod-autoscaler/hack/testenv/go/${RELEASE}/etcd"
    echo
    sed -n 's/^go \(.*\)$/go \1/p' "${gomod}"
    echo
    echo "require ("
    echo "	go.etcd.io/etcd/etcdctl/v3 ${etcd_version}"
    echo "	go.etcd.io/etcd/server/v3 ${etcd_version}"
    echo ")"
    if [[ -n "${ETCD_OVERRIDES}" ]]; then
      echo
      echo "replace ("
      for override in ${ETCD_OVERRIDES//,/ }; do
        echo "	${override%%=*} => ${override%%=*} ${override#*=}"
      done
      echo ")"
    fi
  } >"${E_MOD}/go.mod"
  write_tools_go "${E_MOD}/tools.go" "${header}" go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/server/v3
  rm -f "${E_MOD}/go.sum"
  (cd "${E_MOD}" && GOFLAGS=-mod=mod go mod tidy)
  log "wrapper modules of ${RELEASE} updated; commit hack/testenv/go/${RELEASE}/"
}

# The kwok wrapper: sigs.k8s.io/kwok at KWOK_VERSION with the versions of its own go.sum, resolved
# and built with the installed Go (kwok v0.8.0 needs Go 1.26, newer than most releases' Go).
update_kwok_module() {
  local gomod
  log "resolving sigs.k8s.io/kwok@${KWOK_VERSION} through the module proxy"
  gomod="$(cd "${HERE}" && PATH="${SYSTEM_PATH:-${PATH}}" GOTOOLCHAIN=local \
    go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  [[ -f "${gomod}" ]] || { log "cannot find go.mod of sigs.k8s.io/kwok@${KWOK_VERSION}"; exit 1; }
  mkdir -p "${KWOK_MOD}"
  {
    echo "// Code generated by hack/testenv/build.sh --update for sigs.k8s.io/kwok@${KWOK_VERSION}. DO NOT EDIT."
    echo
    echo "// Wrapper that builds kwok (fake nodes and pod lifecycle for the test control plane)."
    echo "module scheduled-pod-autoscaler/hack/testenv/go/kwok"
    echo
    sed -n 's/^go \(.*\)$/go \1/p' "${gomod}"
    echo
    echo "tool sigs.k8s.io/kwok/cmd/kwok"
    echo
    echo "require sigs.k8s.io/kwok ${KWOK_VERSION}"
  } >"${KWOK_MOD}/go.mod"
  rm -f "${KWOK_MOD}/go.sum"
  (cd "${KWOK_MOD}" && PATH="${SYSTEM_PATH:-${PATH}}" GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod tidy)
  log "kwok wrapper module updated; commit hack/testenv/go/kwok"
}

requires() {  # requires GO_MOD MODULE VERSION: does the wrapper pin that version?
  awk -v m="$2" -v v="$3" '($1 == m && $2 == v) || ($1 == "require" && $2 == m && $3 == v) { f = 1 } END { exit !f }' "$1" 2>/dev/null
}

# The packages whose OpenAPI definitions the release's `make` generated into
# pkg/generated/openapi (build/root/Makefile.generated_files, target KUBE): every directory of
# the kubernetes tree and of its staging modules, except code-generator and sample-apiserver,
# with a .go file that has a `// +k8s:` tag line and a `+k8s:openapi-gen=` tag.
openapi_inputs() {
  local kdir="$1" staged="$2" m v mdir
  tagged_dirs() {
    (cd "$1" && find -H . \( -name '_*' -o -name '.[^.]*' -o -path ./vendor \) -prune -o \
        -type f -name '*.go' -print0 |
      xargs -0 -r grep -l --null '^// *+k8s:' | xargs -0 -r grep -l '+k8s:openapi-gen=' |
      sed 's|/[^/]*$||; s|^\.||' | LC_ALL=C sort -u)
  }
  tagged_dirs "${kdir}" | sed 's|^|k8s.io/kubernetes|'
  while read -r m v; do
    case "${m}" in k8s.io/code-generator | k8s.io/sample-apiserver) continue ;; esac
    mdir="$(cd "${K_MOD}" && go mod download -json "${m}@${v}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
    [[ -d "${mdir}" ]] || { log "cannot download ${m}@${v}"; exit 1; }
    tagged_dirs "${mdir}" | sed "s|^|${m}|"
  done <<<"${staged}"
}

# For releases whose wrapper has openapi.go: runs the release's openapi-gen as its Makefile did
# and prints a `go build -overlay` file that adds the result to the (read-only) module cache's
# pkg/generated/openapi. Prints nothing for releases that commit the file.
generate_openapi() {
  [[ -f "${K_MOD}/openapi.go" ]] || return 0
  local work="${CACHE_ROOT}/${RELEASE}/openapi" kdir inputs
  kdir="$(cd "${K_MOD}" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)"
  if [[ ! -f "${work}/zz_generated.openapi.go" ]]; then
    inputs="$(sed -n 's/^\t_ "\(.*\)"$/\1/p' "${K_MOD}/openapi.go" | grep -v '^k8s.io/kube-openapi/cmd/' | paste -sd, -)"
    log "generating the OpenAPI definitions of ${RELEASE} ($(tr ',' '\n' <<<"${inputs}" | wc -l) packages)"
    rm -rf "${work}.tmp" && mkdir -p "${work}.tmp"
    (cd "${K_MOD}" && CGO_ENABLED=0 go build -trimpath -o "${work}.tmp/openapi-gen" k8s.io/kube-openapi/cmd/openapi-gen)
    # GOROOT: the generator loads packages through `go list`, and a -trimpath binary does not
    # know where its GOROOT is.
    (cd "${K_MOD}" && GOROOT="$(go env GOROOT)" "${work}.tmp/openapi-gen" --logtostderr \
      --input-dirs "${inputs}" \
      --output-package k8s.io/kubernetes/pkg/generated/openapi \
      --output-file-base zz_generated.openapi \
      --go-header-file "${kdir}/hack/boilerplate/boilerplate.generatego.txt" \
      --report-filename "${work}.tmp/violations.report" \
      --output-base "${work}.tmp/out") >&2
    # The Makefile's own check, which also proves the generator saw every input: the API rule
    # violations found must be exactly the release's list of known ones.
    if ! diff -q "${work}.tmp/violations.report" "${kdir}/api/api-rules/violation_exceptions.list" >/dev/null; then
      log "openapi-gen's API rule report differs from the release's api/api-rules/violation_exceptions.list:"
      diff "${work}.tmp/violations.report" "${kdir}/api/api-rules/violation_exceptions.list" | head -20 >&2
      exit 1
    fi
    mv "${work}.tmp/out/k8s.io/kubernetes/pkg/generated/openapi/zz_generated.openapi.go" "${work}.tmp/"
    rm -rf "${work}.tmp/out" "${work}"
    mv "${work}.tmp" "${work}"
  fi
  printf '{"Replace": {"%s": "%s"}}\n' \
    "${kdir}/pkg/generated/openapi/zz_generated.openapi.go" "${work}/zz_generated.openapi.go" \
    >"${work}/overlay.json"
  echo "${work}/overlay.json"
}

# Builds those of the binaries named as arguments that BIN_DIR lacks (all on a first run; only
# the new ones when a checkout adds a component, which takes seconds to minutes instead of a
# full build).
build() {
  local wanted=("$@") missing=() b
  for b in "${wanted[@]}"; do [[ -x "${BIN_DIR}/${b}" ]] || missing+=("${b}"); done
  requires "${K_MOD}/go.mod" k8s.io/kubernetes "${RELEASE}" || update_modules
  if [[ " ${missing[*]} " == *" kwok "* ]]; then
    requires "${KWOK_MOD}/go.mod" sigs.k8s.io/kwok "${KWOK_VERSION}" || update_kwok_module
  fi
  local json commit time major minor ldflags
  json="$(cd "${K_MOD}" && go mod download -json "k8s.io/kubernetes@${RELEASE}")"
  # sed stops at the first match itself: no `| head` whose early exit pipefail would count.
  commit="$(sed -n '/^\t\t"Hash": /{s/^\t\t"Hash": "\(.*\)",\{0,1\}$/\1/p;q;}' <<<"${json}")"
  # The commit time, not "now", so two builds of the same release are identical.
  time="$(cd "${K_MOD}" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)"
  major="${RELEASE#v}"; major="${major%%.*}"
  minor="${RELEASE#v*.}"; minor="${minor%%.*}"
  # What hack/lib/version.sh sets, so `--version` and GET /version report the real release
  # (clients and kubectl compare it; the apiserver derives its binary/emulation version from it).
  ldflags="-s -w"
  local pkg
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X '${pkg}.gitVersion=${RELEASE}'"
    ldflags+=" -X '${pkg}.gitMajor=${major}'"
    ldflags+=" -X '${pkg}.gitMinor=${minor}'"
    ldflags+=" -X '${pkg}.gitCommit=${commit}'"
    ldflags+=" -X '${pkg}.gitTreeState=clean'"
    ldflags+=" -X '${pkg}.buildDate=${time}'"
  done
  mkdir -p "${BIN_DIR}"
  # Build into a temporary directory and move into place at the end, so an interrupted build
  # never leaves a half set of binaries that the "already built" check would accept.
  BUILD_TMP="$(mktemp -d "${BIN_DIR}/.build.XXXXXX")"
  trap 'rm -rf "${BUILD_TMP}"' EXIT
  local tmp="${BUILD_TMP}"
  local start=${SECONDS}
  local overlay="" overlay_flag=() godebug="${GODEBUG:-}"
  for b in "${missing[@]}"; do
    case "${b}" in kube-*) overlay="$(generate_openapi)"; break ;; esac
  done
  if [[ -n "${overlay}" ]]; then
    overlay_flag=(-overlay "${overlay}")
    # Go 1.19 and 1.20 list the packages of the module cache from an index that ignores
    # -overlay (the added file would be missing: "undefined: openapi.GetOpenAPIDefinitions");
    # goindex=0 makes them read the directories. Go 1.16 has no index; the setting is ignored.
    godebug="goindex=0${godebug:+,${godebug}}"
  fi
  for b in "${missing[@]}"; do
    case "${b}" in
      etcd | etcdctl)
        log "building ${b} (module go/${RELEASE}/etcd, $(cd "${E_MOD}" && go version))"
        local etcd_pkg=go.etcd.io/etcd/server/v3
        [[ "${b}" == etcd ]] || etcd_pkg=go.etcd.io/etcd/etcdctl/v3
        (cd "${E_MOD}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${tmp}/${b}" "${etcd_pkg}")
        ;;
      kwok)
        log "building kwok ${KWOK_VERSION} (module go/kwok, the installed Go)"
        (cd "${KWOK_MOD}" && PATH="${SYSTEM_PATH}" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${tmp}/kwok" sigs.k8s.io/kwok/cmd/kwok)
        ;;
      *)
        log "building ${b} ${RELEASE} (module go/${RELEASE}/kubernetes)"
        (cd "${K_MOD}" && GODEBUG="${godebug}" CGO_ENABLED=0 go build -trimpath "${overlay_flag[@]}" -ldflags "${ldflags}" -o "${tmp}/${b}" "k8s.io/kubernetes/cmd/${b}")
        ;;
    esac
  done
  for b in "${missing[@]}"; do mv -f "${tmp}/${b}" "${BIN_DIR}/${b}"; done
  rm -rf "${BUILD_TMP}"
  trap - EXIT
  log "built ${missing[*]} of ${RELEASE} in $((SECONDS - start))s -> ${BIN_DIR}"
  "${BIN_DIR}/kube-apiserver" --version >&2
  # The whole output read, then its first line printed: `etcd --version | head -n1` under
  # pipefail failed the build about once in a hundred (head leaves, etcd's next write dies of
  # SIGPIPE, exit 141; a CI run's test-compat failed on it after a good build).
  local etcd_says
  etcd_says="$("${BIN_DIR}/etcd" --version 2>&1)"
  echo "${etcd_says%%$'\n'*}" >&2
}

ensure() {
  select_release "$1"
  local wanted=("${BINARIES[@]}")
  if [[ "${RELEASE}" == "${DEFAULT_VERSION}" || -n "${with_nodes}" ]]; then
    wanted+=("${NODE_BINARIES[@]}")
  fi
  if have_all "${BIN_DIR}" "${wanted[@]}"; then
    log "binaries for ${RELEASE} present in ${BIN_DIR}"
    return 0
  fi
  build "${wanted[@]}"
}

mode=build
releases=()
with_nodes=""
while (($#)); do
  case "$1" in
    --update) mode=update ;;
    --nodes) with_nodes=1 ;;
    --print-bin-dir) mode=print ;;
    --list) list_releases; exit 0 ;;
    --cached) mode=cached ;;
    --all) mapfile -t releases < <(list_releases) ;;
    v*) releases+=("$1") ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
  shift
done
((${#releases[@]})) || releases=("${SPA_TESTENV_VERSION:-${DEFAULT_VERSION}}")

case "${mode}" in
  print)
    select_release "${releases[0]}"
    echo "${SPA_TESTENV_BIN_DIR:-${BIN_DIR}}"
    exit 0
    ;;
  update)
    for r in "${releases[@]}"; do select_release "${r}"; update_modules; done
    update_kwok_module
    exit 0
    ;;
  cached)
    for r in $(list_releases); do
      if have_all "${CACHE_ROOT}/${r}/bin" "${BINARIES[@]}"; then echo "${r}"; fi
    done
    exit 0
    ;;
esac

if [[ -n "${SPA_TESTENV_BIN_DIR:-}" ]]; then
  if have_all "${SPA_TESTENV_BIN_DIR}" "${REQUIRED[@]}"; then
    log "using binaries from SPA_TESTENV_BIN_DIR=${SPA_TESTENV_BIN_DIR}"
    exit 0
  fi
  log "SPA_TESTENV_BIN_DIR=${SPA_TESTENV_BIN_DIR} lacks one of: ${REQUIRED[*]}"
  exit 1
fi
# One release at a time: each build alone keeps both cores busy.
for r in "${releases[@]}"; do ensure "${r}"; done
