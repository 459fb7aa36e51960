# Quick start on a fresh Debian machine with Swift:  make demo   /   make test
SHELL := /bin/bash
SWIFT ?= swift
APT_PKGS_BUILD := libpcap-dev libbluetooth-dev pkg-config
APT_PKGS_TEST := $(APT_PKGS_BUILD) tshark time
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN := .build/debug/bluesift
DEMO_CAPTURE := Captures/band_mtu23.btsnoop
# Release: cross-module optimisation (generic field sinks specialise across modules), and no
# runtime exclusivity checks (~5% of an ATT-heavy dump). The debug build the tests run keeps
# the checks, so an overlapping access is caught there.
RELEASE_FLAGS := -Xswiftc -cross-module-optimization -Xswiftc -enforce-exclusivity=unchecked

.DEFAULT_GOAL := build
include Tests/VirtualDevice/venv.mk

.PHONY: deps-build deps-test build demo test bench fuzz clean

# Installs only what is missing; apt-get update runs once, only when something is.
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps-build:
	$(call apt_install,$(APT_PKGS_BUILD))

deps-test:
	$(call apt_install,$(APT_PKGS_TEST))

build: deps-build
	$(SWIFT) build

demo: build venv
	@echo "== bluesift info $(DEMO_CAPTURE)"
	@$(BIN) info $(DEMO_CAPTURE)
	@echo "== bluesift dump $(DEMO_CAPTURE) --frames 118-136  (ATT named by GATT, band frames decoded by Plugins/band.yaml)"
	@$(BIN) dump $(DEMO_CAPTURE) --frames 118-136
	@echo
	@echo "== bluesift replay $(DEMO_CAPTURE) against a virtual band whose firmware regressed (Bumble, H4 over TCP)"
	@Tests/VirtualDevice/start_rig.sh start 9301 9302 -- --regression 03 >/dev/null
	@$(BIN) replay $(DEMO_CAPTURE) --transport tcp:127.0.0.1:9301 --timing asap; \
	  rc=$$?; Tests/VirtualDevice/start_rig.sh stop 9302; echo "(exit code $$rc: 1 = differences found)"

test: deps-test venv
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The fast build (see scripts/bench.sh): .build/release/bluesift
release: deps-build
	$(SWIFT) build -c release $(RELEASE_FLAGS)

# btmon (BlueZ) is one of the references the benchmark times.
bench: deps-test
	$(call apt_install,bluez)
	scripts/bench.sh

# libFuzzer targets, FUZZ_SECONDS (default 60) each; see docs/fuzzing.md.
fuzz: deps-build
	scripts/fuzz.sh

clean:
	rm -rf .build .build-fuzz
