# The two commands of the README are `make run` and `make test`; everything else here serves them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: venv lint typecheck check test unit test-latest plan run bench soak clean manifests test-parity \
	test-reliability screenshots test-compat test-karpenter test-bench-smoke test-upgrade \
	test-from-original
.PHONY: lock helm packaging-deps test-packaging test-helm test-prometheus test-image krew krew-tool \
	test-krew bench-capacity bench-nodes bench-ready bench-suggest bench-fleet release release-check

# The venv is the lock, exactly (docs/development.md, "The locked environment"): made anew
# whenever the lock or the package's metadata changes, and everything installed by hash from
# DEV_LOCK without build isolation, so that nothing comes from the index unpinned: first the
# lock's build backend (one dependency, kubernetes-validate 1.25.2, is published only as an
# sdist and is built with it), then the rest, then the package itself, editable, without
# dependencies. tests/unit/project/test_lock.py checks the lock against setup.cfg and the venv
# against the lock.
DEV_LOCK := hack/dev-requirements.txt
PIP_INSTALL = $(BIN)/pip install --quiet --disable-pip-version-check --no-build-isolation
$(STAMP): setup.cfg pyproject.toml $(DEV_LOCK)
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	awk '/^[^ #]/ { keep = /^(setuptools|wheel)==/ } keep' $(DEV_LOCK) > $(VENV)/backend.txt
	$(PIP_INSTALL) --require-hashes --no-deps -r $(VENV)/backend.txt
	$(PIP_INSTALL) --require-hashes -r $(DEV_LOCK)
	$(PIP_INSTALL) --no-deps -e .
	touch $@

venv: $(STAMP)

# Commit subjects of at most 72 characters, after 4151648 (docs/development.md, "Commits").
lint: venv
	$(BIN)/ruff check spa tests bench hack
	$(BIN)/ruff format --check spa tests bench hack
	$(BIN)/lint-imports
	$(BIN)/python hack/check_commit_subjects.py

# bench/ too (a namespace package: its modules are found from the repository's root), and with
# it the test helpers it imports (tests/testenv, tests/integration/harness.py): an API change
# breaks the build, not a benchmark found weeks later.
typecheck: venv
	$(BIN)/mypy --explicit-package-bases spa bench

check: lint typecheck

unit: venv
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

# The unit suite in a throwaway venv with the newest releases setup.cfg allows, instead of the
# lock's: finds what an upstream release breaks on purpose, before `make lock` takes it in
# (docs/development.md, "The locked environment"). Run it before `make lock`, and now and then.
# tests/unit/project/test_lock.py's check that the venv is the lock is skipped here (SPA_UNLOCKED=1).
LATEST_VENV ?= /tmp/spa-latest-venv
test-latest:
	rm -rf $(LATEST_VENV)
	$(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/pip install --quiet --disable-pip-version-check --upgrade pip
	$(LATEST_VENV)/bin/pip install --quiet --disable-pip-version-check --upgrade-strategy eager \
	  '.[test,dev]'
	$(LATEST_VENV)/bin/pip list --disable-pip-version-check --format freeze
	SPA_UNLOCKED=1 $(LATEST_VENV)/bin/pytest -p no:cacheprovider tests/unit $(PYTEST_ARGS)

# Everything but the fault-injection, packaging and compatibility suites, which have targets
# of their own (.ci/run runs them all).
test: check testenv
	hack/system/install.sh test
	$(BIN)/pytest --ignore=tests/reliability --ignore=tests/packaging --ignore=tests/compat \
	  --ignore=tests/bench --ignore=tests/upgrade -m "not karpenter" $(PYTEST_ARGS)

# Every bench/ entry point's --smoke (tests/bench): the real run at its smallest scale, 2 to 3
# minutes of real minute boundaries, out of `make test` to keep it under 15 minutes warm.
test-bench-smoke: venv testenv
	$(BIN)/pytest tests/bench $(PYTEST_ARGS)

# The fault-injection suite (docs/reliability.md): API-server outages, connection cuts, leader
# kills and clock skew on the real control plane; several minutes of real time.
test-reliability: venv testenv
	hack/system/install.sh test-reliability
	$(BIN)/pytest tests/reliability $(PYTEST_ARGS)

# A live switch from the previous release to this one and back on the real control plane
# (docs/install.md, "Version skew"): about 6 minutes, most of it real minute boundaries; the
# previous release's venv is built once into ~/.cache/scheduled-pod-autoscaler/upgrade.
test-upgrade: venv testenv helm
	$(BIN)/pytest tests/upgrade --ignore=tests/upgrade/test_from_original.py $(PYTEST_ARGS)

# From the original Go controller to this one and back on a real Kubernetes 1.21 (docs/install.md,
# "Upgrading from the original Go controller"): about 5 minutes. Not in .ci/run: the original's
# source is a checkout of its GitHub repository, given as SPA_ORIGINAL_SRC, which CI cannot fetch
# (docs/development.md, "From the original Go controller").
test-from-original: venv
	@test -n "$(SPA_ORIGINAL_SRC)" || { echo "SPA_ORIGINAL_SRC=<a checkout of github.com/d-kuro/scheduled-pod-autoscaler> is required"; exit 2; }
	hack/testenv/build.sh v1.21.14
	hack/go-original/build.sh "$(SPA_ORIGINAL_SRC)"
	SPA_ORIGINAL_SRC="$(abspath $(SPA_ORIGINAL_SRC))" $(BIN)/pytest tests/upgrade/test_from_original.py $(PYTEST_ARGS)

# `spa plan` against the API server on 3,000 generated documents, new ones on every run (`make
# test` runs the same test on 300 fixed ones); see tests/integration/test_plan_parity.py.
test-parity: venv testenv
	SPA_PARITY_EXAMPLES=3000 SPA_PARITY_RANDOM=1 \
	  $(BIN)/pytest tests/integration/test_plan_parity.py --timeout 1200 $(PYTEST_ARGS)

# The chart, the alerts and dashboard, the image and the Krew plugin, each with its real tool
# (docs/development.md, "Packaging tests"): helm and krew built by hack/helm and hack/krew,
# buildah, mmdebstrap and prometheus from Debian's archive (hack/system/install.sh; root). Their
# products are cached outside the repository.
PACKAGING_TOOLS := venv testenv packaging-deps helm krew-tool
test-packaging: $(PACKAGING_TOOLS)
	$(BIN)/pytest tests/packaging $(PYTEST_ARGS)
test-helm: venv testenv helm
	$(BIN)/pytest tests/packaging/test_helm.py $(PYTEST_ARGS)
test-prometheus: venv testenv packaging-deps
	$(BIN)/pytest tests/packaging/test_prometheus.py $(PYTEST_ARGS)
test-image: venv testenv packaging-deps
	$(BIN)/pytest tests/packaging/test_image.py $(PYTEST_ARGS)
test-krew: venv krew-tool
	$(BIN)/pytest tests/packaging/test_krew.py $(PYTEST_ARGS)

# The image installs only what these files pin, by hash (docs/install.md, "Supply chain"): the
# package's dependencies from setup.cfg, and the build stage's tools. The hashes cover every
# file the index has for each pinned version, so the lock serves any platform; the markers are
# resolved for Linux on Python 3.11, the image's. tests/unit/project/test_lock.py checks it is current.
UV_COMPILE := $(BIN)/uv pip compile --quiet --generate-hashes --python-version 3.11 \
	--python-platform x86_64-unknown-linux-gnu
# The development lock is universal (every platform and Python the package supports, from
# 3.11's resolution), since developers' machines differ; its hashes cover every file too.
lock: venv
	$(UV_COMPILE) setup.cfg -o hack/image/requirements.txt
	$(UV_COMPILE) hack/image/build-requirements.in -o hack/image/build-requirements.txt
	$(BIN)/uv pip compile --quiet --generate-hashes --universal --python-version 3.11 \
	  --extra test --extra dev setup.cfg hack/dev-requirements.in -o $(DEV_LOCK)

helm:
	hack/helm/build.sh
krew-tool:
	hack/krew/build.sh

# `kubectl spa` for Krew (docs/install.md, "kubectl spa with Krew"): one archive per os/arch
# with a PEX of the package, into ~/.cache/scheduled-pod-autoscaler/krew/archives/VERSION, and
# their manifest plugins/spa.yaml. Run for a release, and upload those archives with it.
krew: venv
	$(BIN)/python hack/krew/plugin.py
packaging-deps:
	hack/system/install.sh test-packaging

# What a release ships, from the commit (HEAD) and dated at it, into dist/release/VERSION/: the
# sdist and wheel, the image (OCI archive) with its SBOM, the chart package, the Krew archives
# and manifest, SHA256SUMS (docs/development.md, "Releasing"). release-check builds it twice
# (the second into dist/release/VERSION.check/) and fails unless the checksums are the same.
# RELEASE_ARGS=--no-image leaves the image out (it takes most of the time).
RELEASE_ARGS ?=
release: venv helm packaging-deps
	$(BIN)/python hack/release/release.py $(RELEASE_ARGS)
release-check: venv helm packaging-deps
	$(BIN)/python hack/release/release.py --check $(RELEASE_ARGS)

# tests/compat against every release of hack/testenv/releases, one after another, each built
# (or reused) first; all releases run, then it fails if any did (docs/development.md).
COMPAT_RELEASES ?= $(shell hack/testenv/build.sh --list)
test-compat: venv
	@failed=""; for r in $(COMPAT_RELEASES); do \
	  echo "== test-compat: Kubernetes $$r"; \
	  if hack/testenv/build.sh $$r && \
	     SPA_TESTENV_VERSION=$$r $(BIN)/pytest tests/compat $(PYTEST_ARGS); \
	  then echo "== test-compat: $$r passed"; else failed="$$failed $$r"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "== test-compat: failed on:$$failed"; exit 1; fi; \
	echo "== test-compat: passed on $(COMPAT_RELEASES)"

# The tests on Karpenter's kwok provider (docs/development.md, "Karpenter"): built first if it is
# not cached (minutes, once). `make test` runs them only where it is built.
test-karpenter: venv testenv testenv-karpenter
	SPA_TESTENV_KARPENTER=1 $(BIN)/pytest -m karpenter tests/integration $(PYTEST_ARGS)

# The CRDs are generated from spa/api and the install.yaml files rendered by kubectl kustomize.
manifests: venv
	$(BIN)/python hack/generate_manifests.py
	$(BIN)/python hack/generate_api_doc.py

plan: venv
	$(BIN)/spa plan -f config/samples

# The README's picture of `spa plan -o html`: the samples' week, rendered by headless Chromium
# (`apt-get install -y chromium`) exactly as tests/browser renders it; and docs/suggest.md's of
# `spa suggest -o html`, from the corpus of tests/history (no Prometheus needed).
SCREENSHOT_AT ?= 2026-11-23T00:00:00Z
screenshots: venv
	tmp=$$(mktemp -d) && \
	$(BIN)/spa plan -f config/samples --at $(SCREENSHOT_AT) -o html > $$tmp/plan.html && \
	$(BIN)/python -m tests.browser.chromium $$tmp/plan.html docs/plan-html.png \
	  --width 1200 --height 670 && \
	$(BIN)/python -m tests.history.pages suggest $$tmp/suggest.html && \
	$(BIN)/python -m tests.browser.chromium $$tmp/suggest.html docs/suggest-html.png \
	  --width 1200 --height 800 && \
	rm -rf $$tmp

# The README's first command: a local control plane, the CRDs, RBAC and samples, and the
# controller in the foreground (Ctrl-C stops it; `make cluster-down` stops the control plane).
RUN_ARGS ?= --log-format text --metrics-addr 127.0.0.1:8080 --probe-addr 127.0.0.1:9090
run: cluster
	KUBECONFIG=$(CLUSTER_DIR)/kubeconfig $(BIN)/kubectl apply --server-side -f config/samples
	@echo
	@echo "Watch it from another terminal:"
	@echo "  export KUBECONFIG=$(CLUSTER_DIR)/kubeconfig PATH=$(CURDIR)/$(BIN):\$$PATH"
	@echo "  kubectl get spa,spasched,hpa -o wide"
	@echo "  spa plan -f config/samples"
	@echo
	KUBECONFIG=$(CLUSTER_DIR)/kubeconfig $(BIN)/spa run $(RUN_ARGS)

# The engine benchmark, then the load benchmark (`spa run` against a real control plane; each
# size waits for a real minute boundary). FULL=1: 1 to 5,000 SPAs, a throttled run and the plot.
BENCH_FULL_ARGS := --sizes 1,100,1000,5000 --throttled 1000 \
  --out docs/results/load-full.json --plot docs/results/load-full.svg
BENCH_QUICK_ARGS := --sizes 1,100
BENCH_LOAD_ARGS ?= $(if $(FULL),$(BENCH_FULL_ARGS),$(BENCH_QUICK_ARGS))
bench: venv testenv
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/load.py $(BENCH_LOAD_ARGS)

# Raises ahead of a shared boundary (docs/schedules.md, issue 38): 1,000 SPAs x 4 Schedules at
# one boundary, the first window start written at B, the last ahead of B, side by side on one
# plane (docs/performance.md, "Raises ahead of a shared boundary").
# SHARDS=4: the same fleet at SHARDS_SPAS (20,000) raised by 4 shards of 2 replicas each,
# beside one process on the same plane, and a shard's active replica killed at B - 30 s
# (bench/shards.py; docs/performance.md, "Shards at a shared boundary"). About 2 hours at
# 20,000 on 2 cores; SHARDS_SPAS=200 for a run of about 8 minutes.
BENCH_FLEET_ARGS ?= --sizes 1000 --early --out docs/results/fleet-early-1000.json
SHARDS_SPAS ?= 20000
BENCH_FLEET_SHARDS_ARGS ?= --sizes $(SHARDS_SPAS) --shards $(SHARDS) \
  --out /tmp/spa-bench-fleet-shards-$(SHARDS_SPAS).json
bench-fleet: venv testenv
	$(if $(SHARDS),$(BIN)/python bench/shards.py $(BENCH_FLEET_SHARDS_ARGS),$(BIN)/python bench/load.py $(BENCH_FLEET_ARGS))

# The soak with an oracle (docs/reliability.md, "Soak"): two `spa run` replicas, 200 SPAs whose
# windows open and close every minute, random faults; every HPA write checked against the engine.
# Not part of `make test`; `make test-bench-smoke` runs `bench/soak.py --smoke` instead (2-3 minutes;
# every bench/ entry point has a --smoke, tests/bench/test_bench_smoke.py runs them all).
# SOAK_MINUTES=5 for a quick run; SOAK_SEED picks the faults.
SOAK_MINUTES ?= 30
soak: venv testenv
	SOAK_MINUTES=$(SOAK_MINUTES) $(BIN)/python bench/soak.py

# Capacity at the boundary (docs/performance.md): N = 1 and 100 Deployments, pod start-up delay
# 0 and 20 s, HPA-only vs immediate scale-up vs lead time; about 10 minutes.
# `spa suggest` on 4 weeks x 500 autoscalers against a real Prometheus (docs/performance.md,
# "spa suggest"); its --smoke is in `make test-bench-smoke`.
bench-suggest: venv
	$(BIN)/python bench/suggest.py --out /tmp/spa-bench-suggest.json

bench-capacity: venv testenv
	$(BIN)/python bench/capacity.py --sizes 1,100 --delays 0,20 --out /tmp/spa-bench-capacity.json

# Nodes before the peak (docs/performance.md, issue 25): N = 1 and 20 SPAs whose windows need new
# nodes from real Karpenter (kwok provider, nodes 60 s late), HPA only vs pod lead vs node lead;
# about 11 minutes.
bench-nodes: venv testenv testenv-karpenter
	$(BIN)/python bench/nodes.py --sizes 1,20 --node-delay 60 --out /tmp/spa-bench-nodes.json

# Ready before the peak (docs/performance.md, issue 37): window after window with leadTime: Auto
# and capacity.leadTime: Auto from no history, real Karpenter's nodes 60 s late, then 120 s, pods
# 20 s to start; N = 1 and 20; about an hour.
bench-ready: venv testenv testenv-karpenter
	$(BIN)/python bench/ready.py --sizes 1,20 --node-delays 60,120 --windows 3,3 --pod-start 20 \
		--out /tmp/spa-bench-ready.json

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .import_linter_cache

# Targets of the local control plane (testenv, cluster, cluster-down) live beside their scripts.
-include hack/testenv/testenv.mk
testenv:
