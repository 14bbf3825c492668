# Vigil: `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NODE_MODULES_STAMP := node_modules/.package-lock.json
BIN := dist/src/cli/main.js
# Vigil's image: the repository is written once, in src/domain/scanners/images.ts
# (the Job settings' vigilImage default and the chart's values agree with it,
# test/chart checks), and the tag is package.json's version.
IMAGE_REPOSITORY := $(shell sed -n "s/^export const VIGIL_IMAGE_REPOSITORY = '\(.*\)';/\1/p" src/domain/scanners/images.ts)
IMAGE_TAG := $(shell sed -n 's/^  "version": "\(.*\)",/\1/p' package.json)
IMAGE ?= $(IMAGE_REPOSITORY):$(IMAGE_TAG)

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: $(NODE_MODULES_STAMP) ## Install npm dependencies (npm ci) when package files changed

# The build is a file make knows about: `make run` recompiles only when a
# source, a config file or the dependencies changed, and `make -q build`
# exits 0 right after a build.
BUILD_STAMP := dist/.build-stamp
BUILD_INPUTS := $(shell find src -type f) scripts/bundle-client-node.ts tsconfig.json tsconfig.build.json package.json

$(BUILD_STAMP): $(NODE_MODULES_STAMP) $(BUILD_INPUTS)
	npm run build --silent
	@touch $@

.PHONY: build
build: $(BUILD_STAMP) ## Install dependencies and compile TypeScript to dist/ when sources changed (npm run build: tsc, then esbuild bundles the Kubernetes client)

.PHONY: run
run: build ## Build and run `vigil serve` with the embedded runtime (Ctrl-C stops it)
	@bash scripts/install-system-deps.sh || echo "warning: scanners such as nmap are missing; scans of those types will fail until they are installed"
	node $(BIN) serve

.PHONY: system-deps
system-deps: ## Install the Debian packages the tests use (nmap, openssl, poppler-utils, chromium) when missing
	@bash scripts/install-system-deps.sh

.PHONY: typecheck
typecheck: deps ## Type-check sources, tests and benchmarks
	npx tsc -p tsconfig.json

.PHONY: lint
lint: deps ## Lint sources, tests, benchmarks and scripts with eslint (recommended rules and DESIGN.md's rings as import boundaries)
	npm run lint --silent

.PHONY: format
format: deps ## Format sources, tests, benchmarks and scripts with prettier (.prettierrc.json)
	npm run format --silent

.PHONY: format-check
format-check: deps ## Check that prettier would change nothing (part of make test)
	npm run format:check --silent

.PHONY: openapi
openapi: deps ## Regenerate src/api/openapi.json from the zod schemas
	npx tsx scripts/write-openapi.ts

.PHONY: reference-docs
reference-docs: deps ## Regenerate docs/configuration.md's variable table and docs/cli.md from the settings module and the CLI program
	npx tsx scripts/write-configuration-doc.ts
	npx tsx scripts/write-cli-doc.ts

.PHONY: test
test: build system-deps typecheck lint format-check ## Install what is missing, build, type-check, lint, check the format, and run every test
	npx mocha

.PHONY: image
image: ## Build Vigil's container image (needs a running Docker daemon); IMAGE=name:tag overrides the name
	docker build --tag $(IMAGE) .

# The NUCLEI scanner image: nuclei with its templates baked in (images/nuclei/Dockerfile), named as src/domain/scanners/images.ts names it.
NUCLEI_IMAGE := $(shell sed -n "s/^  nuclei: \`\(.*\)\$${NUCLEI_TEMPLATES_VERSION}\`,/\1/p" src/domain/scanners/images.ts)$(shell sed -n "s/^export const NUCLEI_TEMPLATES_VERSION = '\(.*\)';/\1/p" src/domain/scanners/images.ts)

.PHONY: nuclei-image
nuclei-image: ## Build the NUCLEI scanner image with pinned templates (NUCLEI_TEMPLATES_SHA256=<sha256 of the templates archive> required)
	@test -n "$(NUCLEI_TEMPLATES_SHA256)" || { echo "set NUCLEI_TEMPLATES_SHA256 to the sha256 of the nuclei-templates archive you reviewed (see images/nuclei/Dockerfile)" >&2; exit 2; }
	docker build --build-arg NUCLEI_TEMPLATES_SHA256=$(NUCLEI_TEMPLATES_SHA256) --tag $(NUCLEI_IMAGE) images/nuclei

.PHONY: print-image
print-image: ## Print the image name and tag that `make image` builds and the chart deploys by default
	@echo $(IMAGE)

.PHONY: chart-files
chart-files: deps ## Copy crds/ into charts/vigil/crds and regenerate config/rbac/operator.yaml from the chart
	npx tsx scripts/write-chart-files.ts

.PHONY: bench
bench: build ## Run the benchmarks in bench/ and print their figures
	npx tsx bench/targets-list.ts
	npx tsx bench/scans.ts
	npx tsx bench/ingest.ts
	npx tsx bench/ingest-stall.ts
	npx tsx bench/webhooks.ts
	npx tsx bench/reports.ts
	npx tsx bench/pdf-turns.ts
	npx tsx bench/wal-checkpoint.ts
	npx tsx bench/dashboard.ts
	npx tsx bench/login-replay.ts
	npx tsx bench/operator.ts
	npx tsx bench/scheduled-operator.ts
	npx tsx bench/scale.ts

.PHONY: mail-sink
mail-sink: deps ## A local SMTP server on 127.0.0.1:46025 that prints the e-mails it receives
	npx tsx scripts/mail-sink.ts

.PHONY: webhook-receiver
webhook-receiver: deps ## A local HTTPS webhook receiver on 127.0.0.1:46443 that prints events and checks signatures (WEBHOOK_SECRET=...)
	npx tsx scripts/webhook-receiver.ts

.PHONY: clean
clean: ## Remove build output
	rm -rf dist
