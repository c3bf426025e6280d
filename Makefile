# The two commands of the README. Both install what is missing (Debian 12
# packages, scripts/install-deps.sh), configure and build.
#   make run   - schedules ResNet-50 on the multi-node template (out/schedule.dfl, out/report.json, out/report.html)
#   make test  - runs the whole test suite (unit, smoke, lit end-to-end, fuzz, the Python package's)
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build run test clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/tools/dflc stdlib/nets/resnet50.dfl stdlib/hw/eyeriss_multinode.dfl -o out/

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

clean:
	rm -rf $(BUILD)
