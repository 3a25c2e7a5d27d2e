# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# WERROR=1 (CI) makes every compiler warning an error.
ifeq ($(WERROR),1)
override CMAKE_FLAGS += -DGEODESIC_WERROR=ON
endif
# LINE_TABLES=1 (CI) compiles with line tables (-g1) instead of full debug
# information: a cold build of the tree 13% shorter.
ifeq ($(LINE_TABLES),1)
override CMAKE_FLAGS += -DGEODESIC_LINE_TABLES=ON
endif

# `make test-sanitize`: the unit label under ASan+UBSan, the threads label under
# TSan, each in a build directory of its own that compiles only those tests.
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
SANITIZE_CMAKE_FLAGS = -DGEODESIC_BUILD_BENCH=OFF -DGEODESIC_BUILD_FUZZ=OFF
SUPPRESSIONS := $(CURDIR)/tests/sanitizers
ASAN_ENV = ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1 \
           LSAN_OPTIONS=suppressions=$(SUPPRESSIONS)/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(SUPPRESSIONS)/tsan.supp
# The ctest names of a label's tests, which are also their build targets.
label_tests = $$(cd $(1) && ctest -N -L $(2) | sed -n 's/^ *Test *\#[0-9]*: //p')

.PHONY: all deps configure build test test-unit test-sanitize test-asan test-tsan demo demo-up bench package metrics-doc clean

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

test-sanitize: test-asan test-tsan

test-asan: deps
	cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DGEODESIC_SANITIZE=address,undefined $(SANITIZE_CMAKE_FLAGS) $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS) --target $(call label_tests,$(ASAN_BUILD_DIR),unit)
	cd $(ASAN_BUILD_DIR) && $(ASAN_ENV) ctest --output-on-failure -L unit -j $(JOBS)

# setarch -R (no ASLR): TSan's fixed memory layout fails on kernels with wide mmap randomisation.
test-tsan: deps
	cmake -S . -B $(TSAN_BUILD_DIR) -G Ninja -DGEODESIC_SANITIZE=thread $(SANITIZE_CMAKE_FLAGS) $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target $(call label_tests,$(TSAN_BUILD_DIR),threads)
	cd $(TSAN_BUILD_DIR) && $(TSAN_ENV) setarch $$(uname -m) -R ctest --output-on-failure -L threads -j $(JOBS)

# The README's metric reference, regenerated from the daemons' registries
# (tests/metrics' metrics_doc_test fails until it is).
metrics-doc: build
	python3 metrics/readme_reference.py --write $(CURDIR) $(BUILD_DIR)

# The Debian package (deploy/CMakeLists.txt), in $(BUILD_DIR): geodesic_VERSION_ARCH.deb.
package: build
	cd $(BUILD_DIR) && cpack -G DEB

demo: build
	$(BUILD_DIR)/bin/geodesic-demo --source-dir $(CURDIR) --binary-dir $(CURDIR)/$(BUILD_DIR)

# The demo, left running after its fiber cut and repair (Ctrl-C stops it): open
# the console it prints, or run Prometheus on deploy/prometheus/prometheus.yml.
demo-up: build
	$(BUILD_DIR)/bin/geodesic-demo --source-dir $(CURDIR) --binary-dir $(CURDIR)/$(BUILD_DIR) --stay

bench: build
	@for b in $(BUILD_DIR)/bin/bench_*; do [ -x "$$b" ] || continue; "$$b" || exit 1; done

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(TSAN_BUILD_DIR)
