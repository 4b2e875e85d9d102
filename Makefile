# The playground's two set-up commands are `make run` and `make test`.
GO ?= go
ADDR ?= :8080

.PHONY: run build test skipped test-js test-short bench check generate fmt fuzz load stress

run: ## start the playground on its embedded defaults
	$(GO) run ./cmd/playground serve --addr $(ADDR)

build:
	$(GO) build -o bin/playground ./cmd/playground

# internal/guide follows docs/adding-an-algorithm.md in a copy of the repository and
# runs the page's done command there: minutes the first time (the copy is built and
# tested cold), then Go's caches serve it. Hence the longer time-out; and it runs after
# the other packages, not beside them, so that its copy's suite (the NATS broker's
# heartbeats, the browser tests' waits) is not starved of processors by theirs.
test: check test-js ## everything CI runs
	$(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v '/internal/guide$$')
	$(GO) test -count=1 -timeout 30m ./internal/guide
	@$(MAKE) --no-print-directory skipped

# The browser tests (web/e2e) need Debian's Chromium and the NATS broker's tests a real
# nats-server; without them those suites skip (CI, with CI set, fails instead). Say so
# loudly, with the one command that installs them, rather than pass in silence.
skipped: ## name the suites this machine could not run, and how to install what they need
	@missing=""; suites=""; \
	if [ ! -x /usr/bin/chromium ]; then missing="$$missing chromium"; suites="$$suites web/e2e (browser tests),"; fi; \
	if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then missing="$$missing nats-server"; suites="$$suites runtime/lecture/natsbroker and the cluster tests,"; fi; \
	if ! ls ../shared/seeds/0*.txt >/dev/null 2>&1; then \
		echo; echo "make test: SKIPPED the tests that check docs/fidelity.md's quotations against the course notes: they read ../shared/seeds, which is not beside this checkout"; \
	fi; \
	if [ -n "$$missing" ]; then \
		echo; echo "make test: SKIPPED$${suites%,}: not installed:$$missing"; \
		echo "make test: install them with: sudo apt-get install -y$$missing   (then run make test again)"; \
	fi

# The browser modules' pure parts (model, causality, layout, timeline ...), with Node's
# built-in runner: no packages needed. The DOM parts are covered by web/e2e.
test-js:
	node --test static/test/*.test.js

test-short:
	$(GO) test -short ./...
	@echo; echo "make test-short: SKIPPED internal/guide's TestTheGuideAddsAnAlgorithm (docs/adding-an-algorithm.md followed in a copy of the repository): make test runs it"

# Every fuzz target of the module (func Fuzz… in a _test.go file), each for FUZZTIME.
# `make test` already runs their seed corpora (testdata/fuzz and f.Add) as plain tests.
# A count (Nx), not a duration: Go 1.26's fuzz coordinator can fail a target with
# "context deadline exceeded" when a duration ends (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 50000x
fuzz: ## run each fuzz target for $(FUZZTIME) (CI: .ci/run)
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for name in $$($(GO) test -list '^Fuzz' $$dir | grep '^Fuzz'); do \
			echo "fuzz $$dir $$name ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$dir; \
		done; \
	done

# The packages whose tests involve timers, sockets or goroutines racing each other,
# each run STRESS_COUNT times under -cpu 1 and 2 while two busy loops take the CPUs:
# a test that only passes on an idle machine fails here. Timing is on a fake clock
# where it can be (runtime/session) and every wait goes through internal/testwait.
# Not here: web/e2e (a browser, minutes a run) and runtime/lecture/natsbroker, whose
# tests run nats-server processes with a 50 ms heartbeat (a lecture unheard of for
# 250 ms is unreachable, so that failover is tested quickly): CPU starvation trips it.
# Of the commands, only the tests that serve (a server's life and shutdown, the load
# tool's storm) are about timing. The web packages split out of web/ (the socket's
# writer and its deadlines, the gate, exports, ops) and the fair queues of the explorer
# and compare race goroutines too.
STRESS_PKGS ?= ./internal/testwait/ ./runtime/session/... ./runtime/lecture/ ./runtime/fairq/ ./runtime/compare/ \
	./web/ ./web/socket/ ./web/gate/ ./web/export/ ./web/ops/
STRESS_CMDS ?= ./cmd/playground/ ./cmd/sessionload/
STRESS_COUNT ?= 20
STRESS = $(GO) test -count=$(STRESS_COUNT) -cpu 1,2 -timeout 150m
stress: ## the timing-sensitive tests $(STRESS_COUNT)x under -cpu 1,2 beside two busy CPU loops
	@sh -c 'while :; do :; done' & busy1=$$!; sh -c 'while :; do :; done' & busy2=$$!; \
	trap 'kill $$busy1 $$busy2' EXIT INT TERM; \
	$(STRESS) $(STRESS_PKGS) && $(STRESS) -run '^Test(Serve|Storm)' $(STRESS_CMDS)

load: ## the load proof in docs/benchmarks.md ("Operations"): loopback only, takes about 5 minutes
	$(GO) build -o bin/playground ./cmd/playground
	$(GO) build -o bin/sessionload ./cmd/sessionload
	bin/sessionload --server bin/playground --sessions 1000 --duration 60s live
	bin/sessionload --server bin/playground --sessions 1000 idle
	bin/sessionload --server bin/playground --sessions 1000 --socket=false idle
	bin/sessionload --server bin/playground --sessions 1000 --played 30s idle
	bin/sessionload --server bin/playground --sessions 500 storm

bench: ## the benchmarks recorded in docs/benchmarks.md
	$(GO) test -run '^$$' -bench . -benchmem -count 3 ./runtime/sim/...

generate: ## templ's views and the browser's copy of the compact frames' fields (static/compact_fields.js)
	$(GO) tool templ generate
	$(GO) generate ./runtime/protocol/

# ESLint and its plugins, at the versions package-lock.json pins (node_modules/ is ignored).
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

check: node_modules/.package-lock.json ## formatting, vet, staticcheck, ESLint, generated files current, no large tracked files
	@big=$$(git ls-files -z 2>/dev/null | grep -zvE '(^|/)testdata/' | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 1000000 {print $$2}'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MB outside testdata (build outputs belong in .gitignore):"; echo "$$big"; exit 1; fi
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	npx --no-install eslint static
	@$(GO) tool templ generate >/dev/null 2>&1; \
	if [ -n "$$(git status --porcelain -- '*_templ.go' 2>/dev/null)" ]; then \
		echo "templ generated files are not current: run 'make generate' and commit"; git status --porcelain -- '*_templ.go'; exit 1; fi
	@$(GO) generate ./runtime/protocol/ || exit 1; \
	if [ -n "$$(git status --porcelain -- static/compact_fields.js 2>/dev/null)" ]; then \
		echo "static/compact_fields.js is not current: run 'make generate' and commit"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')
