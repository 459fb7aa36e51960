# Quick start on a fresh Debian machine with Swift:  make demo   /   make test
SHELL := /bin/bash
SWIFT ?= swift
APT_PKGS_BUILD := libpcap-dev libbluetooth-dev pkg-config zlib1g-dev liblzma-dev libzstd-dev libbz2-dev liblc3-dev libsbc-dev
APT_PKGS_TEST := $(APT_PKGS_BUILD) tshark time chromium fonts-dejavu-core xz-utils bzip2 zstd sbc-tools
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN := .build/debug/bluesift
DEMO_CAPTURE := Captures/band_mtu23.btsnoop
# Release: cross-module optimisation (generic field sinks specialise across modules), and no
# runtime exclusivity checks (~5% of an ATT-heavy dump). The debug build the tests run keeps
# the checks, so an overlapping access is caught there.
RELEASE_FLAGS := -Xswiftc -cross-module-optimization -Xswiftc -enforce-exclusivity=unchecked

.DEFAULT_GOAL := build
include Tests/VirtualDevice/venv.mk
include Tests/VendorOracles/oracles.mk

.PHONY: deps-build deps-test build demo test test-in-tmpdir test-summary test-kernel kernel-deps test-spark spark-deps spark-check bench fuzz clean format release release-static man man-files install install-files uninstall check-static

# Installing (README, "Install"): make install PREFIX=/usr/local [DESTDIR=/tmp/pkg]
PREFIX ?= /usr/local
DESTDIR ?=
# The static build has a build directory of its own, so `release` (bench.sh) and
# `release-static` (install) do not relink each other's binary back and forth.
STATIC_BUILD := .build-static
STATIC_FLAGS := $(RELEASE_FLAGS) --static-swift-stdlib --scratch-path $(STATIC_BUILD)
# The binary install-files copies (install builds it: release, Swift runtime linked in).
BIN_TO_INSTALL ?= $(STATIC_BUILD)/release/bluesift
MAN_BUILD ?= .build/man
COMMIT := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
I_BIN := $(DESTDIR)$(PREFIX)/bin
I_SHARE := $(DESTDIR)$(PREFIX)/share

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
	@mkdir -p demo-out
	@$(BIN) replay $(DEMO_CAPTURE) --transport tcp:127.0.0.1:9301 --timing asap --report demo-out/replay-report.json; \
	  rc=$$?; Tests/VirtualDevice/start_rig.sh stop 9302; echo "(exit code $$rc: 1 = differences found)"
	@echo
	@echo "== bluesift stats $(DEMO_CAPTURE)"
	@$(BIN) stats $(DEMO_CAPTURE)
	@echo
	@echo "== bluesift report: one self-contained HTML file each (no network needed to open them)"
	@$(BIN) report $(DEMO_CAPTURE) -o demo-out/capture-report.html
	@$(BIN) report demo-out/replay-report.json -o demo-out/replay-report.html
	@echo "open $(CURDIR)/demo-out/capture-report.html and $(CURDIR)/demo-out/replay-report.html in a browser"

# Rewrites the sources with the project's swift-format configuration (.swift-format).
format:
	$(SWIFT) format --in-place --recursive --parallel Sources Tests Package.swift

# Everything a test run writes to /tmp (the compiler's, the tests', the rig's) goes to a
# private TMPDIR removed however the run ends: a run leaves /tmp as it found it (and the
# plugin index cache goes there too, not to ~/.cache).
test:
	@t=$$(mktemp -d /tmp/bluesift-test.XXXXXX) && trap 'rm -rf "$$t"' EXIT && \
	  TMPDIR=$$t BLUESIFT_CACHE_DIR=$$t/cache $(MAKE) --no-print-directory test-in-tmpdir

# The summary conformance suite alone (make test runs it too).
test-summary: deps-test build
	python3 scripts/summary_compare.py --jobs 2

test-in-tmpdir: deps-test venv
	@# A protocol's opcodes, event codes, PSMs and CIDs are named only in its own folder
	@# (docs/DESIGN.md); the check's rules are tested on known snippets first.
	@python3 scripts/check_literals.py --self-test > "$${TMPDIR:-/tmp}/literals-self-test.txt" || { cat "$${TMPDIR:-/tmp}/literals-self-test.txt"; exit 1; }
	@python3 scripts/check_literals.py
	@# The project's swift-format configuration (.swift-format); `make format` applies it.
	@$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift && echo "swift format lint: clean"
	@# Silvair's mesh packages for the mesh oracles; without PyPI those suites say skipped.
	@$(MAKE) --no-print-directory mesh-venv || echo "mesh oracles skipped: $(MESH_VENV) could not be installed (see scripts/mesh-requirements.txt)"
	$(SWIFT) build --build-tests
	$(SWIFT) build --product generate-manual   # InstallTests installs the man pages too
	@# The runner's JUnit report gives the counts; skipped tests (no ../shared, no tool)
	@# are listed above with their reasons and counted here, never counted as passed.
	@$(SWIFT) test --skip-build --xunit-output "$$TMPDIR/xunit.xml"; rc=$$?; \
	  sed -n 's/.*<testsuite [^>]*errors="\([0-9]*\)" tests="\([0-9]*\)" failures="\([0-9]*\)" skipped="\([0-9]*\)".*/\1 \2 \3 \4/p' \
	    "$$TMPDIR/xunit-swift-testing.xml" | { read e t f s && echo "swift test: $$((t - f - e)) passed, $$((f + e)) failed, $$s skipped"; }; \
	  exit $$rc
	@# Every claim of stats/info with an independent counterpart checked against tshark over
	@# Captures/, ../shared and crackle's captures (docs/summary-defects.md); ~2 min.
	@python3 scripts/summary_compare.py --jobs 2 > "$$TMPDIR/summary.txt"; rc=$$?; \
	  grep -E "^total|^captures" "$$TMPDIR/summary.txt" | sed 's/^/summary conformance: /'; \
	  [ $$rc = 0 ] || { grep -B1 -E "^  [a-z_]+ " "$$TMPDIR/summary.txt" | grep -v "tshark silent\|tshark wrong" | head -40; exit $$rc; }
	@# Issue 29's advertising plugins against Home Assistant's parsers and bleparser, on their
	@# own test vectors and on the real captures (Tests/VendorOracles/README.md); ~30 s. A machine
	@# where pip cannot install the oracles says SKIPPED and why.
	@$(MAKE) --no-print-directory test-vendors
	@# docs/fleet.md's Spark example runs whenever OpenJDK 17 and pyspark can be installed
	@# here (~2 min, 371 MB); a machine that cannot install them skips it with this line.
	@if $(MAKE) --no-print-directory spark-deps; then $(MAKE) --no-print-directory spark-check; \
	  else echo "test-spark skipped: OpenJDK 17 or pyspark could not be installed here (see docs/fleet.md)"; fi
	@# The kernel harness (Tests/Kernel, docs/transport.md) whenever QEMU, a Debian kernel,
	@# busybox-static and BlueZ install here; otherwise one line says why. Exit 77: skipped.
	@if $(MAKE) --no-print-directory kernel-deps; then Tests/Kernel/run.sh || [ $$? = 77 ]; \
	  else echo "test-kernel skipped: $(KERNEL_PKGS) could not be installed here (see docs/transport.md)"; fi

# Python 3.11 venv with Silvair's bluetooth-mesh-network and bluetooth-mesh-messages, run as
# separate processes by MeshOracleTests and MeshSilvairOracleTests; reinstalled only when
# scripts/mesh-requirements.txt is newer than the stamp. `| $(VDEV_PY)` installs python3-venv
# on a fresh Debian first.
MESH_VENV := .venv-mesh
MESH_STAMP := $(MESH_VENV)/.requirements.stamp
.PHONY: mesh-venv
mesh-venv: $(MESH_STAMP)
$(MESH_STAMP): scripts/mesh-requirements.txt | $(VDEV_PY)
	@[ -x $(MESH_VENV)/bin/python ] || $(VDEV_PYTHON) -m venv $(MESH_VENV)
	$(MESH_VENV)/bin/python -m pip install -q --disable-pip-version-check -r scripts/mesh-requirements.txt
	@touch $@

# Real Linux Bluetooth in the loop: Debian's kernel under QEMU, the rig's controllers as its
# hci0/hci1 (Tests/Kernel/run.sh; docs/transport.md). `make test` runs it too.
KERNEL_PKGS := qemu-system-x86 linux-image-amd64 busybox-static bluez cpio
kernel-deps:
	$(call apt_install,$(KERNEL_PKGS))

test-kernel: kernel-deps venv
	$(SWIFT) build --product bluesift
	Tests/Kernel/run.sh

# docs/fleet.md's Spark section in local mode (Tests/Fleet/spark_check.py), checked against
# stats. `make test` runs it too when the installs succeed.
SPARK_VENV := .venv-spark
test-spark: spark-deps spark-check

spark-deps: deps-test
	$(call apt_install,openjdk-17-jre-headless)
	@[ -x $(SPARK_VENV)/bin/python ] || python3 -m venv $(SPARK_VENV)
	$(SPARK_VENV)/bin/python -m pip install -q --disable-pip-version-check -r Tests/Fleet/requirements-spark.txt

spark-check:
	$(SWIFT) build --product bluesift
	@# The JVM keeps /tmp/hsperfdata_USER whatever TMPDIR says unless told not to.
	@work=$$(mktemp -d); corpus=$$([ -d ../shared/captures/public ] && echo ../shared/captures/public); \
	  JAVA_TOOL_OPTIONS="-XX:-UsePerfData -Djava.io.tmpdir=$${TMPDIR:-/tmp}" \
	  $(SPARK_VENV)/bin/python Tests/Fleet/spark_check.py $(BIN) docs/fleet.md $$work $$corpus Captures; rc=$$?; \
	  rm -rf $$work; exit $$rc

# The fast build (scripts/bench.sh builds through this target too): .build/release/bluesift,
# stamped with the commit. RELEASE_BIN names the binary to stamp (a test stamps a copy).
RELEASE_BIN ?= .build/release/bluesift
release: deps-build
	$(SWIFT) build -c release $(RELEASE_FLAGS)
	@python3 scripts/stamp_binary.py $(RELEASE_BIN) "$(COMMIT)"

# The installable binary: as `release`, with the Swift runtime and Foundation linked in, so
# it runs on a Debian machine without Swift (only Debian's libc, libstdc++, libpcap).
release-static: deps-build
	$(SWIFT) build -c release $(STATIC_FLAGS) --product bluesift
	@python3 scripts/stamp_binary.py $(STATIC_BUILD)/release/bluesift "$(COMMIT)"

# No Swift library in ldd, and it decodes a bundled capture in an empty environment, and
# with /opt/swift hidden where a private mount namespace is allowed (scripts/check_static.sh).
check-static:
	scripts/check_static.sh $(BIN_TO_INSTALL) $(DEMO_CAPTURE)

# Man pages from swift-argument-parser's manual generator (its generate-manual tool, the one
# its GenerateManual plugin runs), one page per command; built beside the static binary,
# whose ArgumentParser it reuses.
man: release-static
	$(SWIFT) build -c release $(STATIC_FLAGS) --product generate-manual
	$(MAKE) man-files

# The pages of BIN_TO_INSTALL, written by GENERATE_MANUAL into MAN_BUILD.
GENERATE_MANUAL ?= $(STATIC_BUILD)/release/generate-manual
man-files:
	rm -rf $(MAN_BUILD) && mkdir -p $(MAN_BUILD)
	$(GENERATE_MANUAL) $(BIN_TO_INSTALL) --multi-page --output-directory $(MAN_BUILD)
	rm -f $(MAN_BUILD)/bluesift.plugins.bench.1   # hidden (make bench's), no page: the generator ignores shouldDisplay

install: release-static check-static man install-files

# Copies an already built binary (BIN_TO_INSTALL), the plugins, the man pages (when built)
# and bash/zsh/fish completions under $(DESTDIR)$(PREFIX). The binary is stripped of its
# debug information (109 MB → 69 MB); INSTALL_STRIP= keeps it (packagers strip themselves).
INSTALL_STRIP ?= -s
install-files:
	install -d $(I_BIN) $(I_SHARE)/bluesift/Plugins $(I_SHARE)/man/man1 \
	  $(I_SHARE)/bash-completion/completions $(I_SHARE)/zsh/site-functions $(I_SHARE)/fish/vendor_completions.d
	install -m 755 $(INSTALL_STRIP) $(BIN_TO_INSTALL) $(I_BIN)/bluesift
	install -m 644 Plugins/*.yaml Plugins/README.md $(I_SHARE)/bluesift/Plugins/
	if [ -d $(MAN_BUILD) ]; then install -m 644 $(MAN_BUILD)/*.1 $(I_SHARE)/man/man1/; fi
	$(BIN_TO_INSTALL) --generate-completion-script bash > $(I_SHARE)/bash-completion/completions/bluesift
	$(BIN_TO_INSTALL) --generate-completion-script zsh > $(I_SHARE)/zsh/site-functions/_bluesift
	$(BIN_TO_INSTALL) --generate-completion-script fish > $(I_SHARE)/fish/vendor_completions.d/bluesift.fish

uninstall:
	rm -f $(I_BIN)/bluesift $(I_SHARE)/man/man1/bluesift.1 $(I_SHARE)/man/man1/bluesift.*.1 \
	  $(I_SHARE)/bash-completion/completions/bluesift $(I_SHARE)/zsh/site-functions/_bluesift \
	  $(I_SHARE)/fish/vendor_completions.d/bluesift.fish
	rm -rf $(I_SHARE)/bluesift

# btmon (BlueZ) is one of the references the benchmark times.
bench: deps-test
	$(call apt_install,bluez)
	scripts/bench.sh

# libFuzzer targets, FUZZ_SECONDS (default 60) each; see docs/fuzzing.md.
fuzz: deps-build
	scripts/fuzz.sh

clean:
	rm -rf .build .build-fuzz $(STATIC_BUILD)
