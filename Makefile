# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test test-unit demo bench clean

all: build

deps:
	@deploy/install-deps.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L unit -j $(JOBS)

demo: build
	$(BUILD_DIR)/bin/geodesic-demo --source-dir $(CURDIR) --binary-dir $(CURDIR)/$(BUILD_DIR)

bench: build
	@for b in $(BUILD_DIR)/bin/bench_*; do [ -x "$$b" ] || continue; "$$b" || exit 1; done

clean:
	rm -rf $(BUILD_DIR)
