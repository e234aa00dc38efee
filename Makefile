# The front door. `make` builds; `make run` starts a local deployment;
# `make test` builds and passes every test; `make bench` measures.
# Every target first installs missing Debian packages (scripts/install-deps).

PRESET ?= release
BUILD_DIR := build/$(PRESET)
RADIUSWARD := $(BUILD_DIR)/radiusward
RUN_DIR ?= $(CURDIR)/build/run
# Paths relative to the checkout in ccache's hashes, so that another clone on
# the same machine (CI's) reuses the compiled objects. Without NOHASHDIR the
# -g builds would hash the build directory's absolute path and never hit.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: all deps configure build asan tsan test test-release test-asan run bench format clean deb

all: build

deps:
	@scripts/install-deps

$(BUILD_DIR)/build.ninja: CMakeLists.txt CMakePresets.json | deps
	cmake --preset $(PRESET)

configure: deps
	cmake --preset $(PRESET)

build: deps configure
	cmake --build --preset $(PRESET)

asan: deps
	cmake --preset asan
	cmake --build --preset asan

# Only the tests of code that starts threads (ctest label "tsan", the target
# tsan_tests: the shells', io's and consensus's unit tests and the two
# integration tests of real Nodes), built and run under ThreadSanitizer.
# The rest has no second thread for TSan to watch.
tsan: deps
	cmake --preset tsan
	cmake --build --preset tsan --target tsan_tests
	ctest --preset tsan

# Everything in the default build, then the unit tests and short fuzz runs
# under ASan+UBSan, then the threaded tests under TSan.
test: build asan
	ctest --preset release
	ctest --preset asan
	$(MAKE) tsan

run: build
	scripts/run-demo $(RADIUSWARD) $(RUN_DIR)

bench: build
	cmake --build --preset $(PRESET) --target benchmarks
	scripts/run-bench $(BUILD_DIR)

# The Debian package of the release build:
# build/deb/radiusward_VERSION_ARCH.deb (docs/operations.md, "Debian package
# and systemd").
deb:
	$(MAKE) build PRESET=release
	scripts/build-deb build/release/radiusward build/deb

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf build
