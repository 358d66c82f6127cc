# Sourced, not run: `ensure_toolchain` puts a pinned Go toolchain first on PATH. Callers set
# TOOLCHAIN (go1.16.15 ...), CACHE_ROOT (the testenv cache, where toolchains are kept once for
# every script) and a `log` function. Used by hack/testenv/build.sh (old Kubernetes releases)
# and hack/go-original/build.sh (the original Go controller, a go 1.16 module).

# The Go toolchain TOOLCHAIN (go1.16.15 ...), first on PATH, with GOTOOLCHAIN=local so no go
# command switches to another one. The installed Go if it is that version; else the module
# golang.org/toolchain from the proxy (any installed Go from 1.21 on can download it), linked
# out of the module cache into the testenv cache: GOTOOLCHAIN=go1.19.13 alone would run it from
# inside the module cache, where toolchains older than go1.21 cannot find the main module
# (`go list .` fails with "import of unknown directory").
ensure_toolchain() {
  export GOTOOLCHAIN=local
  if [[ -z "${SYSTEM_PATH:-}" ]]; then SYSTEM_PATH="${PATH}"; fi
  export PATH="${SYSTEM_PATH}"
  if ! command -v go >/dev/null 2>&1; then
    log "Go (1.21 or newer, to fetch the pinned toolchain ${TOOLCHAIN}) is needed to build the control plane;"
    log "install it, or set SPA_TESTENV_BIN_DIR to a directory with ${REQUIRED[*]}"
    exit 1
  fi
  [[ "$(go env GOVERSION)" != "${TOOLCHAIN}" ]] || return 0
  local root="${CACHE_ROOT}/toolchains/${TOOLCHAIN}"
  if [[ ! -x "${root}/bin/go" ]]; then
    local module json dir
    module="golang.org/toolchain@v0.0.1-${TOOLCHAIN}.$(go env GOHOSTOS)-$(go env GOHOSTARCH)"
    log "fetching Go ${TOOLCHAIN} (${module})"
    json="$(cd / && GOFLAGS= go mod download -json "${module}")"
    dir="$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"${json}")"
    [[ -f "${dir}/bin/go" ]] || { log "no Go toolchain in ${dir}: ${json}"; exit 1; }
    mkdir -p "${root%/*}"
    rm -rf "${root}.tmp"
    # Hard links: no second copy on disk (cp -a where the caches are on different devices).
    cp -al "${dir}" "${root}.tmp" 2>/dev/null || cp -a "${dir}" "${root}.tmp"
    # A module zip records no file modes: the commands come out of `go mod download` not
    # executable (the go command sets the bits itself only when it switches toolchains).
    find "${root}.tmp/bin" "${root}.tmp/pkg/tool" -type f -exec chmod a+x {} +
    mv "${root}.tmp" "${root}"
  fi
  export PATH="${root}/bin:${SYSTEM_PATH}"
}
