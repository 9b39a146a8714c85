# leasehold: the two-command quick start.
#   make run      installs what building and running need (scripts/install-deps.sh run),
#                 builds the leasehold binary, starts a single-node server (data in ./data)
#   make check    the fast tier, for the edit loop: builds only what the tests labelled
#                 `check` need (release) and runs them (docs/testing.md)
#   make test     installs also the test-only packages (install-deps.sh test), builds
#                 (release and ASan+UBSan), runs every test in the release build, then
#                 the ASan+UBSan tier (in-process, server and C++ client tests, and every
#                 fuzz target replaying its corpus and variants of it)
#   make test-long  everything else under ASan+UBSan (cluster, torture, the tests
#                 labelled `long`...) and a short libFuzzer run of every fuzz target
#   make package  builds the Debian package $(BUILD)/leasehold_<version>_<arch>.deb (docs/install.md)
#   make fuzz     runs every fuzzer long (FUZZ_SECONDS each; docs/fuzzing.md)
#   make torture RUNS=N  N long fault-injection runs, folded into docs/RELIABILITY.md (docs/torture.md)
.PHONY: all deps deps-test build build-run build-asan build-fuzz run package check test test-release test-asan test-long test-fuzz fuzz fuzz-corpus bench torture clean

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= resp_parser command_args log_entry entry_journal history_file snapshot etcd_log http_request script_catalog net net-numbers
FUZZ_LEDGER  ?= $(BUILD_FUZZ)/fuzz/runs.jsonl
JOBS       ?= $(shell nproc)
RUNS       ?= 10
TORTURE_SECONDS ?= 30
TORTURE_SEED    ?= random
TORTURE_MODE    ?= mixed
TORTURE_SUMMARY ?= $(BUILD)/torture/runs.jsonl
# The reliability record kept in the repository: the aggregate and its page.
RELIABILITY_TOTALS ?= docs/reliability/totals.json
RELIABILITY_PAGE   ?= docs/RELIABILITY.md
# The commit the runs are built from, "-dirty" when the tree has changes.
RUN_COMMIT = $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
TORTURE_FAULTS  ?= kill,kill-standby,pause-server,pause-client,clock-wall,kill-etcd,kill-etcd-majority,pause-etcd,power-cut,disk-eio,disk-full,partition,one-way-loss,slow-link,partition-node-etcd,one-way-loss-node-etcd,slow-link-node-etcd,partition-etcd,one-way-etcd,disk-eio-etcd,disk-full-etcd,power-cut-etcd
# ccache: hits across clones in other folders (CI builds a fresh clone).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CMAKE_COMMON = -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache

all: build

# deps: building and running; deps-test: also the tests, fuzzers and benchmarks.
deps:
	@bash scripts/install-deps.sh run

deps-test:
	@bash scripts/install-deps.sh test

# Everything: the binary, the libraries, the man page, the tests, the benchmarks.
build: deps-test
	@cmake -S . -B $(BUILD) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLEASEHOLD_BUILD_TESTS=ON -DLEASEHOLD_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Only what running and packaging need: the binary (with the libraries) and
# the man page. A fresh $(BUILD) is configured without the tests and
# benchmarks (they need the test-only packages); an existing one is kept.
build-run: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLEASEHOLD_BUILD_TESTS=OFF -DLEASEHOLD_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target leasehold leasehold_extras

# The whole ASan+UBSan build (the long tests and the benchmarks included).
ASAN_CMAKE = -S . -B $(BUILD_ASAN) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=ON
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan: deps-test
	@cmake $(ASAN_CMAKE) -DLEASEHOLD_LONG_TESTS=ON -DLEASEHOLD_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

# The libFuzzer targets need clang (Debian's clang 14); only fuzz/ is built.
build-fuzz: deps-test
	@cmake -S . -B $(BUILD_FUZZ) $(CMAKE_COMMON) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEASEHOLD_FUZZ=ON -DLEASEHOLD_BUILD_TESTS=OFF -DLEASEHOLD_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_targets

run: build-run
	@mkdir -p data
	./$(BUILD)/leasehold server --data-dir ./data

# The .deb (cpack -G DEB; Depends computed by dpkg-shlibdeps). docs/install.md.
package: build-run
	cd $(BUILD) && cpack -G DEB

# The fast tier (docs/testing.md): in $(BUILD), only the targets that the
# tests labelled `check` need (target check_tests), then those tests. An
# existing $(BUILD) with the tests is not configured again (ninja does that
# when a CMakeLists.txt changed).
check: deps-test
	@grep -qs '^LEASEHOLD_BUILD_TESTS:BOOL=ON' $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLEASEHOLD_BUILD_TESTS=ON -DLEASEHOLD_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target check_tests
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L '^check$$'

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The ASan+UBSan tier of `make test`: the in-process tests, the server's
# and the C++ client's real-process tests and the fuzz targets' replays
# (label asan_tier, chosen in tests/CMakeLists.txt and fuzz/CMakeLists.txt),
# built alone (target asan_tier_tests), without the
# tests labelled long (-DLEASEHOLD_LONG_TESTS=OFF: their sources are not even
# compiled) and without the benchmarks. The rest runs under ASan in
# `make test-long`.
test-asan: deps-test
	@cmake $(ASAN_CMAKE) -DLEASEHOLD_LONG_TESTS=OFF -DLEASEHOLD_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS) --target asan_tier_tests
	cd $(BUILD_ASAN) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -L '^asan_tier$$' -LE '^(no_asan|long)$$'

# What leaves `make test` under ASan+UBSan: every test outside the ASan tier
# (tests/CMakeLists.txt: cluster, etcd, torture, the other clients...) and
# the tests labelled long (the release tier of `make test` runs all of
# them), and the short libFuzzer runs.
test-long: build-asan test-fuzz
	cd $(BUILD_ASAN) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -LE '^(no_asan|asan_tier)$$'
	cd $(BUILD_ASAN) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -L '^asan_tier$$' -L '^long$$' -LE '^no_asan$$'

# A short run (LEASEHOLD_FUZZ_SECONDS, 8 s) of each libFuzzer target over its seed corpus.
test-fuzz: build-fuzz
	cd $(BUILD_FUZZ) && ctest --output-on-failure -j $(JOBS) -L fuzz --timeout 300

test: test-release test-asan

# Long fuzzing, niced (scripts/fuzz-long.sh): each libFuzzer target
# FUZZ_SECONDS, then the network fuzzer against the ASan server for
# FUZZ_SECONDS, plain (net) and in its extreme-numbers mode (net-numbers). New inputs and crashes go to $(BUILD_FUZZ)/fuzz/work/<target>/.
# Every run is written to FUZZ_LEDGER (under the build), then folded into
# the aggregate RELIABILITY_TOTALS (kept in the repository, so the volume
# adds up across clones) and the fuzzing section of RELIABILITY_PAGE.
fuzz: build-fuzz build-asan
	bash scripts/fuzz-long.sh $(BUILD_FUZZ) $(BUILD_ASAN) $(FUZZ_SECONDS) $(FUZZ_LEDGER) \
	  $(RELIABILITY_TOTALS) $(RELIABILITY_PAGE) $(FUZZ_TARGETS)

# Rewrites the seed corpora in fuzz/corpus/ from real encodings (fuzz/corpus_gen.cc).
fuzz-corpus: build-fuzz
	@cmake --build $(BUILD_FUZZ) --target fuzz_corpus_gen
	./$(BUILD_FUZZ)/fuzz/fuzz_corpus_gen fuzz

# Benchmarks (docs/bench.md): the core state machine's, then bench/run_all.sh,
# then the scaling model of shards (bench/sim/scale_model.py).
# Their raw output goes to BENCH_OUT, under $(BUILD) (never into tracked
# files); bench/results_page.py then rewrites the tables of
# docs/bench-results.md from it (commit that when a conclusion changed).
BENCH_OUT ?= $(BUILD)/bench/results-$$(date -u +%Y%m%d-%H%M%S)
bench: build
	@out=$(BENCH_OUT) && mkdir -p "$$out" && \
	  ./$(BUILD)/bench/leasehold_core_bench --benchmark_out="$$out/core.json" --benchmark_out_format=json && \
	  BUILD=$(BUILD) OUT_DIR="$$out" BENCH_ENTRY="make bench" bash bench/run_all.sh && \
	  python3 bench/sim/scale_model.py >"$$out/scale_model.txt" && \
	  python3 bench/results_page.py "$$out" docs/bench-results.md

# Long torture runs (docs/torture.md): seeds TORTURE_SEED, TORTURE_SEED+1, ...;
# failing histories are kept under $(BUILD)/torture/failures/ with their seed.
# Each run appends a line to TORTURE_SUMMARY (under the build); then, also
# when runs failed, the report folds them into the aggregate
# RELIABILITY_TOTALS (kept in the repository, so the record adds up across
# clones), rewrites the torture section of RELIABILITY_PAGE, and moves the
# summary aside to $(BUILD)/torture/folded/ so that no run is counted twice.
# The exit status is the runs'.
torture: deps-test
	@cmake -S . -B $(BUILD) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLEASEHOLD_BUILD_TESTS=ON -DLEASEHOLD_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target leasehold leasehold-torture
	@mkdir -p $(dir $(TORTURE_SUMMARY)) $(BUILD)/torture/folded
	status=0; ./$(BUILD)/torture/leasehold-torture run --runs $(RUNS) --seed $(TORTURE_SEED) --seconds $(TORTURE_SECONDS) \
	  --mode $(TORTURE_MODE) --clock random --faults $(TORTURE_FAULTS) --summary $(TORTURE_SUMMARY) \
	  --commit $(RUN_COMMIT) || status=$$?; \
	if [ -f $(TORTURE_SUMMARY) ]; then \
	  ./$(BUILD)/torture/leasehold-torture report --totals $(RELIABILITY_TOTALS) --page $(RELIABILITY_PAGE) \
	    $(TORTURE_SUMMARY) || exit 2; \
	  mv $(TORTURE_SUMMARY) $(BUILD)/torture/folded/$$(date -u +%Y%m%dT%H%M%SZ)-runs.jsonl; \
	fi; \
	exit $$status

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
