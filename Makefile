# The user's front door. `make demo` and `make test` are the two set-up commands: each installs
# what is missing (scripts/bootstrap), configures and builds, then runs the demo or every test.
# The main build uses GCC: its code for the wasm interpreter loop (one function of threaded
# handlers) is 10-20% faster than clang 14's, which shuffles registers around the handlers
# (docs/BENCHMARKS.md, "Compiler"). The fuzz targets need clang's libFuzzer: their own folder.
BUILD_DIR ?= build
SAN_BUILD_DIR ?= build-sanitize
FUZZ_BUILD_DIR ?= build-fuzz
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PREFIX ?= $(HOME)/.local

.PHONY: all bootstrap configure build test demo install sanitize-test fuzz clean help

all: build

help:
	@echo "make demo           install what is missing, build, run the demo (C and Python contracts on genvm-node, with the LLM and web modules; ~2 min)"
	@echo "make test           install what is missing, build, run every test (ctest)"
	@echo "make build          configure and build into $(BUILD_DIR)/"
	@echo "make install        build, then install the binaries, genvm-cc and the C SDK under PREFIX (default ~/.local)"
	@echo "make sanitize-test  unit tests under ASan+UBSan, built with clang, in $(SAN_BUILD_DIR)/"
	@echo "make fuzz           build the fuzz targets with clang in $(FUZZ_BUILD_DIR)/, run each for FUZZ_SECONDS (default 60)"
	@echo "make clean          remove build folders"

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo $(BUILD_DIR)

install: build
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX) >/dev/null
	@echo "installed under $(PREFIX): put $(PREFIX)/bin on PATH"

# Its tests run with a 64 MiB stack: clang's -O0 frames with ASan's redzones take several times
# the release build's stack, and the request nesting bounds (1024 levels of calldata) are sized
# for the release build's frames under the default 8 MiB.
SAN_STACK_KB ?= 65536
# The sanitizer build uses clang: at -O0 with ASan and UBSan it compiles this tree in half
# GCC's time (GCC's UBSan instrumentation of the Boost.Beast code alone doubles a file's
# compile), and its reports carry file:line through llvm-symbolizer. Line tables (-g1) are all
# a report needs.
sanitize-test: bootstrap
	@cmake -S . -B $(SAN_BUILD_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DGENVM_SANITIZE=ON -DGENVM_FUZZ=OFF -DGENVM_BUILD_CPYTHON=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SAN_BUILD_DIR) -j $(JOBS)
	@ulimit -s $(SAN_STACK_KB) || echo "sanitize-test: the stack limit stays at $$(ulimit -s) KiB" >&2; ctest --test-dir $(SAN_BUILD_DIR) --output-on-failure -j $(JOBS) -L unit

fuzz: bootstrap
	@cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DGENVM_BUILD_CPYTHON=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzzers
	@scripts/run-fuzzers $(FUZZ_BUILD_DIR) $${FUZZ_SECONDS:-60}

clean:
	rm -rf $(BUILD_DIR) $(SAN_BUILD_DIR) $(FUZZ_BUILD_DIR)
