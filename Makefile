# Thin wrapper around meson.  `make run` and `make test` set up a fresh
# Debian 12 machine (apt-get) before building.
BUILD      ?= build
TEST_BUILD ?= build-test
MESON_TEST_ARGS ?=
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= fuzz-npy fuzz-arg-spec fuzz-module-spec fuzz-ops

.PHONY: all deps fuzz-deps build run test bench fuzz clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Dbuildtype=release

$(TEST_BUILD)/build.ninja:
	meson setup $(TEST_BUILD) -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false

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
	xvfb-run -a meson test -C $(TEST_BUILD) --print-errorlogs $(MESON_TEST_ARGS)

bench: build
	$(BUILD)/bench/tracescope-bench
	$(BUILD)/bench/tracescope-bench-viewer
	$(BUILD)/bench/tracescope-bench-render

# libFuzzer (clang), each target for FUZZ_SECONDS; fails on a finding.
fuzz: fuzz-deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD) $(addprefix fuzz/,$(FUZZ_TARGETS))
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(FUZZ_BUILD)
