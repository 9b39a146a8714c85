# leasehold: the two-command quick start.
#   make run   installs what is missing, builds, starts a single-node server (data in ./data)
#   make test  installs what is missing, builds (release and ASan+UBSan), runs every test
.PHONY: all deps build build-asan run test test-release test-asan bench clean

BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc)
# ccache: hits across clones in other folders (CI builds a fresh clone).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CMAKE_COMMON = -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(BUILD_ASAN) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

run: build
	@mkdir -p data
	./$(BUILD)/leasehold server --data-dir ./data

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 900 -LE no_asan

test: test-release test-asan

bench: build
	./$(BUILD)/bench/leasehold_core_bench
	BUILD=$(BUILD) bash bench/run_all.sh

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
