# The user's front door. `make demo` and `make test` are the two set-up commands: each installs
# what is missing (scripts/bootstrap), configures and builds, then runs the demo or every test.
BUILD_DIR ?= build
SAN_BUILD_DIR ?= build-sanitize
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all bootstrap configure build test demo sanitize-test fuzz clean help

all: build

help:
	@echo "make demo           install what is missing, build, run the demo"
	@echo "make test           install what is missing, build, run every test (ctest)"
	@echo "make build          configure and build into $(BUILD_DIR)/"
	@echo "make sanitize-test  unit tests under ASan+UBSan, built with GCC, in $(SAN_BUILD_DIR)/"
	@echo "make fuzz           run every fuzz target for FUZZ_SECONDS (default 60) each"
	@echo "make clean          remove build folders"

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo $(BUILD_DIR)

sanitize-test: bootstrap
	@cmake -S . -B $(SAN_BUILD_DIR) -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DGENVM_SANITIZE=ON -DGENVM_FUZZ=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(SAN_BUILD_DIR) -j $(JOBS)
	@ctest --test-dir $(SAN_BUILD_DIR) --output-on-failure -j $(JOBS) -L unit

fuzz: build
	@scripts/run-fuzzers $(BUILD_DIR) $${FUZZ_SECONDS:-60}

clean:
	rm -rf $(BUILD_DIR) $(SAN_BUILD_DIR)
