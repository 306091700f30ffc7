# Halo's everyday commands (a thin layer over CMake and CTest).
#
#   make              build into build/
#   make demo         set up what is missing, build, run a ping-pong on 2 ranks
#   make check        the quick tier: generated files up to date, unit and MPI tests
#   make check-full   everything CI runs: quick tier, the slow tests, make demo,
#                     sanitizer builds (address+undefined, thread), launch under
#                     Hydra, mpi4py
#   make install PREFIX=/opt/halo
#
# Build directories: build/ (main), build-asan/, build-tsan/.

PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
BUILD := build

.PHONY: all build demo check check-quick check-full check-gen check-release check-asan check-tsan \
        check-hydra check-mpi4py check-demo install deps clean

all: build

build:
	cmake -S . -B $(BUILD) -DHALO_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@tools/ci/deps.sh

demo: deps build
	@echo "== ping-pong between 2 ranks on this node (latency: half round trip; bandwidth: windowed)"
	@bash -o pipefail -c '$(BUILD)/bin/mpiexec -n 2 $(BUILD)/bin/halo-pingpong -m 4194304 | \
	  awk '"'"'NR==1 || $$1==8 || $$1==1024 || $$1==65536 || $$1==1048576 || $$1==4194304'"'"''

check: deps check-quick

check-gen:
	python3 tools/gen/gen_binding.py --check
	python3 tools/gen/gen_fortran.py --check

check-quick: build check-gen
	cd $(BUILD) && ctest -L quick -j2 --output-on-failure --timeout 300
	tools/ci/check_unsupported.sh $(BUILD)/bin/halo_info

check-full: deps check-quick
	cd $(BUILD) && ctest -L full --output-on-failure --timeout 900
	$(MAKE) check-demo check-release check-asan check-tsan check-hydra check-mpi4py

# The README's set-up command, as a user runs it: it must print every size.
check-demo:
	@$(MAKE) --no-print-directory demo > $(BUILD)/demo.out
	@for s in 8 1024 65536 1048576 4194304; do grep -q "^$$s " $(BUILD)/demo.out || \
	  { echo "make demo: no line for $$s bytes"; cat $(BUILD)/demo.out; exit 1; }; done
	@echo "make demo: ok"

# The library as a Release build (-O3) compiles it: no warning there either
# (inlining shows GCC paths that the default -O2 build does not).
check-release:
	cmake -S . -B build-release -DHALO_WERROR=ON -DCMAKE_BUILD_TYPE=Release
	cmake --build build-release -j$(JOBS) --target mpi_abi

# With LeakSanitizer: a test program, halo-bench or the library that loses
# memory fails its test.
check-asan:
	cmake -S . -B build-asan -DHALO_WERROR=ON -DHALO_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest -L quick -j2 --output-on-failure --timeout 600

check-tsan:
	cmake -S . -B build-tsan -DHALO_WERROR=ON -DHALO_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-tsan -j$(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest -L tsan -j2 --output-on-failure --timeout 600

check-hydra: build
	tools/ci/check_hydra.sh $(BUILD)

check-mpi4py: build
	tools/ci/mpi4py.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-release build-asan build-tsan
