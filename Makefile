# Thin wrapper over meson/ninja. Every target installs missing Debian packages first.
#   make test   build everything (plain + ASan/UBSan/fuzz builds) and run every suite
#   make build  configure and build the plain build only
#   make bench  run the Google Benchmark binaries
#   make run    the uet-perf demo: server and client over memif on this machine
#   make docs   render the Graphviz figures of docs/figures/ (*.dot -> *.svg)
BUILD     ?= build
SAN_BUILD ?= build-san
FUZZ_SECONDS ?= 20

.PHONY: all deps build build-san test bench run clean format docs

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD) --buildtype=debugoptimized

# clang, because libFuzzer and its coverage instrumentation come with it.
$(SAN_BUILD)/build.ninja: | deps
	CXX=clang++ meson setup $(SAN_BUILD) --buildtype=debug \
	    -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true -Dbenchmarks=false \
	    -Dcpp_args=-fno-sanitize-recover=all

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

build-san: deps $(SAN_BUILD)/build.ninja
	ninja -C $(SAN_BUILD)

test: build build-san
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/run-tests.sh $(BUILD) $(SAN_BUILD)

bench: build
	meson test -C $(BUILD) --benchmark --verbose

run: build
	@bash scripts/demo.sh $(BUILD)

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

# The figures are committed rendered, so reading the docs needs no Graphviz; this target is for
# whoever edits a .dot file (apt-get install graphviz). Nothing else depends on it.
DOT_FIGURES := $(wildcard docs/figures/*.dot)
docs:
	@command -v dot >/dev/null || { echo "dot missing: apt-get install -y graphviz"; exit 1; }
	@for f in $(DOT_FIGURES); do echo "dot -Tsvg $$f -o $${f%.dot}.svg"; dot -Tsvg "$$f" -o "$${f%.dot}.svg" || exit 1; done

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
