# Targets of the local control plane (included by the top-level Makefile).
#   make testenv        build (or reuse) etcd, kube-apiserver, kube-controller-manager,
#                       kube-scheduler and kwok
#   make testenv-karpenter  build (or reuse) Karpenter's kwok provider and its CRDs (minutes;
#                       only the tests marked `karpenter` need it, `make test` never builds it)
#   make cluster        start the same control plane in the background for experiments, with
#                       NODES fake nodes (default 3) on which pods become Ready
#   make cluster-down   stop it
#   make cluster KARPENTER=1  the same with Karpenter's kwok provider on it (make testenv-karpenter),
#                       whose nodes register NODE_DELAY seconds (default 60) after it launches them
# CLUSTER_DIR keeps the cluster's certificates, etcd data, logs and kubeconfig.
CLUSTER_DIR ?= /tmp/spa-cluster
NODES ?= 3
KARPENTER ?=
NODE_DELAY ?= 60

.PHONY: testenv testenv-karpenter cluster cluster-down

testenv:
	hack/testenv/build.sh

testenv-karpenter:
	hack/testenv/karpenter.sh

# config/crd before config/rbac (roles may name the CRDs' resources); a kustomization is applied
# with -k, plain YAML with -f; an empty directory is skipped.
cluster: venv testenv $(if $(KARPENTER),testenv-karpenter)
	$(BIN)/python -m tests.testenv up --dir $(CLUSTER_DIR) --nodes $(NODES) \
	  $(if $(KARPENTER),--karpenter --node-delay $(NODE_DELAY) --timeout 240)
	@for d in config/crd config/rbac; do \
	  if [ -f $$d/kustomization.yaml ]; then \
	    KUBECONFIG=$(CLUSTER_DIR)/kubeconfig $(BIN)/kubectl apply --server-side -k $$d || exit 1; \
	  elif ls $$d/*.yaml >/dev/null 2>&1; then \
	    KUBECONFIG=$(CLUSTER_DIR)/kubeconfig $(BIN)/kubectl apply --server-side -f $$d || exit 1; \
	  fi; \
	done
	@echo "export KUBECONFIG=$(CLUSTER_DIR)/kubeconfig"

cluster-down: venv
	$(BIN)/python -m tests.testenv down --dir $(CLUSTER_DIR)
