# krtt — Kubernetes Reconciler Transition Tables.
# `make test` builds every tool it needs into bin/ (once) and runs all tests.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN        := $(CURDIR)/bin
K8S_BIN    := $(BIN)/k8s
CONTROLLER_GEN := $(BIN)/controller-gen
KUBE_APISERVER := $(K8S_BIN)/kube-apiserver
ETCD       := $(K8S_BIN)/etcd
KRTT       := $(BIN)/krtt
TOOLS_DIR  := $(CURDIR)/hack/tools
CAPI_DIR   := $(CURDIR)/hack/capi
CAPI_MANAGER ?= $(BIN)/capi-manager
# kube-apiserver reports this version (a plain `go build` says v0.0.0-master,
# which Cluster API refuses); keep it in step with k8s.io/kubernetes in hack/tools.
K8S_VERSION := v1.37.0
K8S_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
  -X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(K8S_VERSION:v%=%))) \
  -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION:v%=%))) \
  -X k8s.io/component-base/version.gitTreeState=clean
GO_TEST_FLAGS ?= -timeout 30m
export KUBEBUILDER_ASSETS ?= $(K8S_BIN)

.PHONY: all
all: build

##@ Tools (built from the Go module proxy; skipped when present)

$(ETCD):
	@mkdir -p $(K8S_BIN)
	cd $(TOOLS_DIR) && go build -o $(ETCD) ./etcd

$(KUBE_APISERVER):
	@mkdir -p $(K8S_BIN)
	@echo "building kube-apiserver from k8s.io/kubernetes (about 10 minutes the first time)"
	cd $(TOOLS_DIR) && go build -ldflags "$(K8S_VERSION_LDFLAGS)" -o $(KUBE_APISERVER) k8s.io/kubernetes/cmd/kube-apiserver

$(CAPI_MANAGER):
	@mkdir -p $(dir $(CAPI_MANAGER))
	@echo "building the Cluster API core manager from sigs.k8s.io/cluster-api (about 2 minutes the first time)"
	cd $(CAPI_DIR) && go build -o $(CAPI_MANAGER) sigs.k8s.io/cluster-api/core

$(CONTROLLER_GEN):
	@mkdir -p $(BIN)
	cd $(TOOLS_DIR) && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: kube-apiserver-version
kube-apiserver-version: $(KUBE_APISERVER) ## Relink bin/k8s/kube-apiserver when it does not report K8S_VERSION (an older build says v0.0.0-master).
	@v="$$($(KUBE_APISERVER) --version 2>/dev/null || true)"; \
	  if [ "$$v" != "Kubernetes $(K8S_VERSION)" ]; then \
	    echo "$(KUBE_APISERVER) reports '$$v'; relinking it to report $(K8S_VERSION)" >&2; \
	    cd $(TOOLS_DIR) && go build -ldflags "$(K8S_VERSION_LDFLAGS)" -o $(KUBE_APISERVER).tmp k8s.io/kubernetes/cmd/kube-apiserver; \
	    mv -f $(KUBE_APISERVER).tmp $(KUBE_APISERVER); \
	  fi

.PHONY: tools
tools: $(ETCD) $(KUBE_APISERVER) $(CONTROLLER_GEN) ## Build kube-apiserver, etcd and controller-gen into bin/.

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object paths=./api/... paths=./test/infrastructure/sim/api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC into config/ (config/rbac, and config/rbac-self-hosted for self-hosted Clusters).
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) crd paths=./test/infrastructure/sim/api/... output:crd:artifacts:config=config/sim/crd
	$(CONTROLLER_GEN) rbac:roleName=krtt-operator paths=./actions/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=krtt-operator-self-hosted paths=./internal/selfhosted/... output:rbac:artifacts:config=config/rbac-self-hosted
	$(CONTROLLER_GEN) rbac:roleName=krtt-sim paths=./test/infrastructure/sim/... output:rbac:artifacts:config=config/sim/rbac

.PHONY: build
build: ## Build the binaries into bin/.
	go build -o $(BIN)/ ./cmd/...

.PHONY: krtt
krtt:
	go build -o $(KRTT) ./cmd/krtt

.PHONY: docs
docs: krtt ## Render docs/tables/ from the shipped tables.
	$(KRTT) docs --out docs/tables --features features transitions

.PHONY: lint
lint: krtt ## gofmt, go vet and krtt lint on the shipped tables.
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	$(KRTT) lint transitions
	$(KRTT) lint --catalog examples/door/catalog.json examples/door/transitions

.PHONY: check-generated
check-generated: krtt $(CONTROLLER_GEN) ## Fail when generated files or docs differ from what is committed.
	@# Written at the same depth as docs/tables so relative links compare equal.
	@tmp=$$(mktemp -d -p docs .check.XXXXXX); trap 'rm -rf $$tmp' EXIT; \
	  $(KRTT) docs --out $$tmp --features features transitions >/dev/null; \
	  if ! diff -ru docs/tables $$tmp; then echo "docs/tables is stale: run 'make docs' and commit"; exit 1; fi
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=$$tmp/krtt; \
	  $(CONTROLLER_GEN) crd paths=./test/infrastructure/sim/api/... output:crd:artifacts:config=$$tmp/sim; \
	  if ! diff -ru -x kustomization.yaml config/crd/bases $$tmp/krtt; then echo "config/crd is stale: run 'make manifests' and commit"; exit 1; fi; \
	  if ! diff -ru -x kustomization.yaml config/sim/crd $$tmp/sim; then echo "config/sim/crd is stale: run 'make manifests' and commit"; exit 1; fi
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(CONTROLLER_GEN) rbac:roleName=krtt-operator paths=./actions/... output:rbac:artifacts:config=$$tmp; \
	  if ! diff -u config/rbac/role.yaml $$tmp/role.yaml; then echo "config/rbac/role.yaml is stale: run 'make manifests' and commit"; exit 1; fi
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(CONTROLLER_GEN) rbac:roleName=krtt-operator-self-hosted paths=./internal/selfhosted/... output:rbac:artifacts:config=$$tmp; \
	  if ! diff -u config/rbac-self-hosted/role.yaml $$tmp/role.yaml; then echo "config/rbac-self-hosted/role.yaml is stale: run 'make manifests' and commit"; exit 1; fi
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(CONTROLLER_GEN) rbac:roleName=krtt-sim paths=./test/infrastructure/sim/... output:rbac:artifacts:config=$$tmp; \
	  if ! diff -u config/sim/rbac/role.yaml $$tmp/role.yaml; then echo "config/sim/rbac/role.yaml is stale: run 'make manifests' and commit"; exit 1; fi

.PHONY: test
test: tools lint check-generated ## Build tools if missing, then run every test (unit, envtest, godog) on shared control planes (hack/testcp), and the alert and dashboard tests.
	go run ./hack/testcp -- go test $(GO_TEST_FLAGS) ./...
	cd examples && go vet ./... && go test -count=1 $(GO_TEST_FLAGS) ./...
	$(MAKE) --no-print-directory alerts

.PHONY: alerts
alerts: ## Only the alert and dashboard tests (test/alerts and hack/dashboard-preview, modules of their own with Prometheus's PromQL engine).
	cd test/alerts && go test $(GO_TEST_FLAGS) ./...
	cd hack/dashboard-preview && go vet ./... && go test $(GO_TEST_FLAGS) ./...

.PHONY: test-stress
test-stress: tools ## The whole suite shuffled STRESS_N times (default 3) on a starved CPU (GOMAXPROCS=1, busy loops); lists each failing test with its package and shuffle seed (STRESS_PKGS narrows it). Not part of make test.
	@GO_TEST_FLAGS='$(GO_TEST_FLAGS)' hack/stress.sh

.PHONY: specs
specs: tools ## Run only the Gherkin features, with pretty output.
	go test $(GO_TEST_FLAGS) ./features/... -run TestFeatures -v -args --godog.format=pretty

BENCH_N ?= 200

.PHONY: run
run: tools ## Local control plane in .krtt/ (kept across runs; RUN_ARGS=--fresh starts over) + operator + simulated provider + config/samples. With KUBECONFIG set: the operator against that cluster.
	go build -o $(BIN)/krtt-local ./cmd/krtt-local
	$(BIN)/krtt-local $(RUN_ARGS)

SCENE ?= lifecycle

.PHONY: demo
demo: tools ## Narrated Machine lifecycle on a throw-away control plane in .krtt/demo (about 80s); SCENE=rollout: a rolling update of a MachineDeployment of 3 Machines (maxSurge 1, maxUnavailable 0), a line per row it fires (about 30s).
	go run ./cmd/krtt-demo -scene $(SCENE)

.PHONY: bench
bench: tools ## Scale benchmark: BENCH_N Machines (default 200) created, given Pods, deleted; the operator measured as its own process (BENCH_ARGS='-o json' for JSON, '-profile DIR' for the CPU profiles per phase of every process and the operator's heap).
	@go run ./cmd/krtt-bench -n $(BENCH_N) $(BENCH_ARGS)

BENCH_STEPS ?= 1000,5000,10000

.PHONY: bench-scale
bench-scale: tools ## Scale steps: krtt alone at each N of BENCH_STEPS (default 1000,5000,10000; about 35 min on 2 cores), each on a fresh API server; one table of CPU and peak RSS per Machine and CPU per Machine against the first step.
	@go run ./cmd/krtt-bench -steps $(BENCH_STEPS) $(BENCH_ARGS)

ROLLOUT_N ?= 30

.PHONY: bench-rollout
bench-rollout: tools ## Rolling-update benchmark: a MachineDeployment of ROLLOUT_N Machines (default 30; maxSurge 3, maxUnavailable 0) pointed at new templates; rollout wall time, requests per Machine replaced, peak Machines, min available (fails past the limits).
	@go run ./cmd/krtt-bench -mode rollout -n $(ROLLOUT_N) $(BENCH_ARGS)

.PHONY: bench-peer
bench-peer: tools kube-apiserver-version $(CAPI_MANAGER) ## Side-by-side bench: krtt and the Cluster API Machine controller (bin/capi-manager, built once) on the same API server, same BENCH_N; run in both orders (each on a fresh API server; BENCH_ARGS='-order krtt-first' for one), each run's table, the means and the ratios of the means.
	@go run ./cmd/krtt-bench -n $(BENCH_N) -peer capi -capi-manager $(CAPI_MANAGER) -capi-crds "$$(cd $(CAPI_DIR) && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)/core/config/crd/bases" $(BENCH_ARGS)

CHAOS_ARGS ?=

.PHONY: chaos
chaos: $(ETCD) $(KUBE_APISERVER) ## Long chaos suite: operator SIGKILLs, kube-apiserver restarts, fault proxy, leader failover, every table mutation; invariants checked on a timeline; prints a table (short version runs in make test).
	go test -count=1 -timeout 90m -v -run '^(TestChaos|TestMutations)$$' ./test/chaos -args -chaos.long $(CHAOS_ARGS)

DASHBOARD_N ?= 400

.PHONY: dashboard-preview
dashboard-preview: tools ## Write docs/img/dashboard.png: the Grafana dashboard's own queries evaluated with Prometheus's PromQL engine over the krtt operator's metrics, scraped every second during krtt-bench -n DASHBOARD_N (default 400, about 2 min), drawn as HTML and shot with headless Chromium (apt-get installs it if missing). Not Grafana; not part of make test.
	@[ -x /usr/bin/chromium ] || { apt-get update && apt-get install -y chromium fonts-dejavu-core; }
	cd hack/dashboard-preview && go run . -repo $(CURDIR) -n $(DASHBOARD_N) -out $(CURDIR)/docs/img/dashboard.png

.PHONY: bench-engine
bench-engine: ## Engine micro-benchmarks (kept out of make test).
	go test -run '^$$' -bench . -benchmem ./engine/...

FUZZ_TIME ?= 1m

.PHONY: bad-input
bad-input: tools ## Only the bad-input catalogs: hostile Machines/Clusters against the API server, malformed tables against krtt lint, the loader and krtt-operator --tables.
	go test $(GO_TEST_FLAGS) ./api/v1alpha1/ -run 'TestBadInputCatalog|TestHostileButValid'
	go test $(GO_TEST_FLAGS) ./actions/ ./cmd/krtt/ ./cmd/krtt-operator/ -run 'Bad|Huge|Good'

.PHONY: security
security: tools ## Only the least-privilege suite: a full lifecycle as the operator's ServiceAccount under config/rbac (and with config/rbac-self-hosted for self-hosted Clusters), unused grants, Deployment hardening.
	go test $(GO_TEST_FLAGS) ./test/security/

.PHONY: fuzz
fuzz: ## Run each fuzz target (table loader; Machine, Pod verdict, MachineSet, MachineDeployment and Cluster fact observers) for FUZZ_TIME (default 1m); their seeds also run in make test.
	go test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZ_TIME) ./engine
	go test -run '^$$' -fuzz '^FuzzMachineObservers$$' -fuzztime $(FUZZ_TIME) ./actions/machine/observerfuzz
	go test -run '^$$' -fuzz '^FuzzPodVerdictObservers$$' -fuzztime $(FUZZ_TIME) ./actions/machine/observerfuzz
	go test -run '^$$' -fuzz '^FuzzMachineSetObservers$$' -fuzztime $(FUZZ_TIME) ./actions/machineset/observerfuzz
	go test -run '^$$' -fuzz '^FuzzMachineDeploymentObservers$$' -fuzztime $(FUZZ_TIME) ./actions/machinedeployment/observerfuzz
	go test -run '^$$' -fuzz '^FuzzClusterObservers$$' -fuzztime $(FUZZ_TIME) ./actions/cluster

##@ Release

# VERSION names a release. Given on the command line (make release
# VERSION=v0.3.0), it is a vMAJOR.MINOR.PATCH that release tags HEAD with,
# for `go get ...@VERSION`; otherwise (the environment's included, so a stray
# variable never tags) the nearest tag or the commit, and nothing is tagged.
RELEASE_TAG := $(filter command line,$(origin VERSION))
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
# IMG is the image `make release` installs and `make docker-build` builds.
IMG ?= ghcr.io/krtt-dev/krtt-operator:$(VERSION)
DIST ?= $(CURDIR)/dist
KUBECTL ?= kubectl
CONTAINER_TOOL ?= docker

# The image's name and tag are quoted in the overlay: a commit whose short
# hash is all digits (git describe --always) would otherwise read as a number.
.PHONY: release
release: ## Write $(DIST)/install.yaml (CRDs, RBAC, leader election, Deployment; image IMG), $(DIST)/sim.yaml (the simulated provider, optional) and $(DIST)/self-hosted.yaml (the RBAC for self-hosted Clusters, optional); with VERSION=vX.Y.Z also tag HEAD with it (annotated, clean tree only, never pushed).
	$(if $(RELEASE_TAG),@hack/release-tag.sh check '$(VERSION)')
	@mkdir -p $(DIST)
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; cp -r config $$tmp/; \
	  img='$(IMG)'; name="$${img%:*}"; tag="$${img##*:}"; \
	  if [ "$$name" = "$$img" ] || [ "$${tag#*/}" != "$$tag" ]; then name="$$img"; tag=latest; fi; \
	  for overlay in default sim; do \
	    mkdir -p $$tmp/config/release-$$overlay; \
	    printf 'resources:\n  - ../%s\nimages:\n  - name: ghcr.io/krtt-dev/krtt-operator\n    newName: "%s"\n    newTag: "%s"\n' "$$overlay" "$$name" "$$tag" > $$tmp/config/release-$$overlay/kustomization.yaml; \
	  done; \
	  $(KUBECTL) kustomize $$tmp/config/release-default > $(DIST)/install.yaml; \
	  $(KUBECTL) kustomize $$tmp/config/release-sim > $(DIST)/sim.yaml; \
	  $(KUBECTL) kustomize $$tmp/config/rbac-self-hosted > $(DIST)/self-hosted.yaml
	@echo "wrote $(DIST)/install.yaml, $(DIST)/sim.yaml and $(DIST)/self-hosted.yaml for $(IMG)"
	$(if $(RELEASE_TAG),@hack/release-tag.sh tag '$(VERSION)')

.PHONY: docker-build
docker-build: ## Build the image IMG (operator, krtt CLI, krtt-sim) with CONTAINER_TOOL (docker).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the image IMG.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
