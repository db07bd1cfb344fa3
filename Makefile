# The two commands of the README. Both install what is missing (scripts/install-deps.sh),
# configure and build with the CMake preset, then run.
PRESET ?= default
BUILD := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: run test test-asan test-all build deps configure bench format clean

run: build
	$(BUILD)/apps/tinyrun/tinyrun

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Every suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan:
	$(MAKE) test PRESET=asan

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET) -Wno-dev > /dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

bench: build
	$(BUILD)/bench/tg_bench_rewrite
	$(BUILD)/bench/tg_bench_cpu
	$(BUILD)/bench/tg_bench_tensor

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf build
