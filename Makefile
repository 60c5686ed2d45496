# Thin wrapper around meson.  `make run` and `make test` set up a fresh
# Debian 12 machine (apt-get) before building.
BUILD      ?= build
TEST_BUILD ?= build-test
TSAN_BUILD ?= build-tsan
MESON_TEST_ARGS ?=
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= fuzz-npy fuzz-arg-spec fuzz-module-spec fuzz-ops fuzz-control-flow fuzz-graph-serial fuzz-chrome-import fuzz-session fuzz-onnx fuzz-worker-messages fuzz-worker-requests

.PHONY: all deps fuzz-deps build run test tsan bench fuzz clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Dbuildtype=release

$(TEST_BUILD)/build.ninja:
	meson setup $(TEST_BUILD) -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false

# ThreadSanitizer sees pthread's locks, not GLib's futex-based ones: the
# engine locks with pthread, and GSlice is kept out of the way.
$(TSAN_BUILD)/build.ninja:
	meson setup $(TSAN_BUILD) -Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized

fuzz-deps:
	@scripts/install-deps.sh --fuzz

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	$(BUILD)/app/tracescope --module seeds

test: deps $(TEST_BUILD)/build.ninja
	ninja -C $(TEST_BUILD)
	scripts/install-ort.sh $(TEST_BUILD)/ort
	xvfb-run -a meson test -C $(TEST_BUILD) --print-errorlogs $(MESON_TEST_ARGS)
	$(MAKE) tsan

# The engine's tests again under ThreadSanitizer.
tsan: deps $(TSAN_BUILD)/build.ninja
	G_SLICE=always-malloc TSAN_OPTIONS=halt_on_error=1 \
	  meson test -C $(TSAN_BUILD) --suite engine --no-suite cli --print-errorlogs $(MESON_TEST_ARGS)

bench: build
	$(BUILD)/bench/tracescope-bench
	$(BUILD)/bench/tracescope-bench-kernels
	$(BUILD)/bench/tracescope-bench-viewer
	$(BUILD)/bench/tracescope-bench-inspector
	$(BUILD)/bench/tracescope-bench-render
	$(BUILD)/bench/tracescope-bench-worker
	$(BUILD)/bench/tracescope-bench-profiler
	$(BUILD)/bench/tracescope-bench-timeline
	$(BUILD)/bench/tracescope-bench-debug
	$(BUILD)/bench/tracescope-bench-diverge
	$(BUILD)/bench/tracescope-bench-threads
	$(BUILD)/bench/tracescope-bench-sim
	if [ -x $(BUILD)/bench/tracescope-bench-gpu ]; then $(BUILD)/bench/tracescope-bench-gpu; \
	else echo "bench-gpu: skipped: not built (no CUDA toolkit, or -Dcuda=disabled)"; fi
	scripts/bench-peers $(BUILD)
	scripts/bench-onnx $(BUILD)
	scripts/bench-train $(BUILD)

# libFuzzer (clang), each target for FUZZ_SECONDS; fails on a finding.
fuzz: fuzz-deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD) $(addprefix fuzz/,$(FUZZ_TARGETS))
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
