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
	cd $(TOOLS_DIR) && go build -o $(KUBE_APISERVER) k8s.io/kubernetes/cmd/kube-apiserver

$(CONTROLLER_GEN):
	@mkdir -p $(BIN)
	cd $(TOOLS_DIR) && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: tools
tools: $(ETCD) $(KUBE_APISERVER) $(CONTROLLER_GEN) ## Build kube-apiserver, etcd and controller-gen into bin/.

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC into config/.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=krtt-operator paths=./internal/controller/... output:rbac:artifacts:config=config/rbac

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

.PHONY: check-generated
check-generated: krtt $(CONTROLLER_GEN) ## Fail when generated files or docs differ from what is committed.
	@# Written at the same depth as docs/tables so relative links compare equal.
	@tmp=$$(mktemp -d -p docs .check.XXXXXX); trap 'rm -rf $$tmp' EXIT; \
	  $(KRTT) docs --out $$tmp --features features transitions >/dev/null; \
	  if ! diff -ru docs/tables $$tmp; then echo "docs/tables is stale: run 'make docs' and commit"; exit 1; fi
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=$$tmp; \
	  if ! diff -ru -x kustomization.yaml config/crd/bases $$tmp; then echo "config/crd is stale: run 'make manifests' and commit"; exit 1; fi
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(CONTROLLER_GEN) rbac:roleName=krtt-operator paths=./internal/controller/... output:rbac:artifacts:config=$$tmp; \
	  if ! diff -u config/rbac/role.yaml $$tmp/role.yaml; then echo "config/rbac/role.yaml is stale: run 'make manifests' and commit"; exit 1; fi

.PHONY: test
test: tools lint check-generated ## Build tools if missing, then run every test (unit, envtest, godog).
	go test $(GO_TEST_FLAGS) ./...

.PHONY: specs
specs: tools ## Run only the Gherkin features, with pretty output.
	go test $(GO_TEST_FLAGS) ./features/... -run TestFeatures -v -args --godog.format=pretty

BENCH_N ?= 200

.PHONY: run
run: tools ## Local control plane in .krtt/ (kept across runs; RUN_ARGS=--fresh starts over) + operator + simulated provider + config/samples. With KUBECONFIG set: the operator against that cluster.
	go build -o $(BIN)/krtt-local ./cmd/krtt-local
	$(BIN)/krtt-local $(RUN_ARGS)

.PHONY: demo
demo: tools ## Narrated Machine lifecycle on a throw-away control plane in .krtt/demo (about 40s).
	go run ./cmd/krtt-demo

.PHONY: bench
bench: tools ## Scale benchmark: BENCH_N Machines (default 200) created, given Pods, deleted; the operator measured as its own process.
	go run ./bench -n $(BENCH_N)

CHAOS_ARGS ?=

.PHONY: chaos
chaos: $(ETCD) $(KUBE_APISERVER) ## Long chaos suite: operator SIGKILLs, kube-apiserver restarts, fault proxy, leader failover; invariants checked on a timeline; prints a table (short version runs in make test).
	go test -count=1 -timeout 60m -v -run '^TestChaos$$' ./test/chaos -args -chaos.long $(CHAOS_ARGS)

.PHONY: bench-engine
bench-engine: ## Engine micro-benchmarks (kept out of make test).
	go test -run '^$$' -bench . -benchmem ./engine/...

FUZZ_TIME ?= 1m

.PHONY: bad-input
bad-input: tools ## Only the bad-input catalogs: hostile Machines/Clusters against the API server, malformed tables against krtt lint, the loader and krtt-operator --tables.
	go test $(GO_TEST_FLAGS) ./api/v1alpha1/ -run 'TestBadInputCatalog|TestHostileButValid'
	go test $(GO_TEST_FLAGS) ./tables/ ./cmd/krtt/ ./cmd/krtt-operator/ -run 'Bad|Huge|Good'

.PHONY: security
security: tools ## Only the least-privilege suite: a full lifecycle as the operator's ServiceAccount under config/rbac, unused grants, Deployment hardening.
	go test $(GO_TEST_FLAGS) ./test/security/

.PHONY: fuzz
fuzz: ## Run each fuzz target (table loader, Machine fact observers) for FUZZ_TIME (default 1m); their seeds also run in make test.
	go test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZ_TIME) ./engine
	go test -run '^$$' -fuzz '^FuzzMachineObservers$$' -fuzztime $(FUZZ_TIME) ./actions/machine/observerfuzz

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
