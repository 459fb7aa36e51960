# Quick start on a fresh Debian machine with Swift:  make demo   /   make test
SHELL := /bin/bash
SWIFT ?= swift
APT_PKGS_BUILD := libpcap-dev libbluetooth-dev pkg-config
APT_PKGS_TEST := $(APT_PKGS_BUILD) tshark time
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN := .build/debug/bluesift
DEMO_CAPTURE := Captures/pongbot_btsnoop_hci.log

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

demo: build
	@echo "== bluesift info $(DEMO_CAPTURE)"
	@$(BIN) info $(DEMO_CAPTURE)
	@echo
	@echo "== bluesift dump $(DEMO_CAPTURE) --protocol att (first 25 lines)"
	@$(BIN) dump $(DEMO_CAPTURE) --protocol att | head -25

test: deps-test venv
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: deps-test
	scripts/bench.sh

# libFuzzer targets, FUZZ_SECONDS (default 60) each; see docs/fuzzing.md.
fuzz: deps-build
	scripts/fuzz.sh

clean:
	rm -rf .build .build-fuzz
