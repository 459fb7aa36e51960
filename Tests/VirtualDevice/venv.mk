# Python virtual environment for the virtual Bluetooth rig (Tests/VirtualDevice).
# Included by the top-level Makefile.
#   make venv            .venv at the repo root with Tests/VirtualDevice/requirements.txt
#   make rig-selftest    starts the rig, checks it end to end (< 20 s)
#   make band-captures   regenerates Captures/band_*
#   make classic-capture regenerates Captures/classic_a2dp_hfp.btsnoop (in-process, no ports)
# Requirements are (re)installed only when requirements.txt is newer than the stamp; pip
# does not reach the index for a pinned requirement that is already installed.
# Included anywhere, this file does not change the including Makefile's default goal.
VDEV_SAVED_GOAL := $(.DEFAULT_GOAL)
VDEV_PYTHON ?= python3
VDEV_VENV := .venv
VDEV_PY := $(VDEV_VENV)/bin/python
VDEV_DIR := Tests/VirtualDevice
VDEV_STAMP := $(VDEV_VENV)/.requirements.stamp
VDEV_SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: venv venv-clean rig-selftest band-captures classic-capture

venv: $(VDEV_STAMP)

# A fresh Debian may lack python3, and its python3 lacks ensurepip until python3-venv is
# installed: try first, install the packages only when creating the venv fails.
$(VDEV_PY):
	@$(VDEV_PYTHON) -m venv $(VDEV_VENV) >/dev/null 2>&1 || { \
	  rm -rf $(VDEV_VENV); \
	  echo "python3 -m venv failed: installing python3 python3-venv"; \
	  $(VDEV_SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(VDEV_SUDO) apt-get install -y -qq --no-install-recommends \
	    python3 python3-venv >/dev/null && \
	  $(VDEV_PYTHON) -m venv $(VDEV_VENV); }

$(VDEV_STAMP): $(VDEV_DIR)/requirements.txt | $(VDEV_PY)
	$(VDEV_PY) -m pip install -q --disable-pip-version-check -r $(VDEV_DIR)/requirements.txt
	@touch $@

venv-clean:
	rm -rf $(VDEV_VENV)

rig-selftest: venv
	$(VDEV_DIR)/selftest.sh

band-captures: venv
	$(VDEV_DIR)/make_captures.sh

classic-capture: venv
	$(VDEV_PY) $(VDEV_DIR)/classic_session.py Captures/classic_a2dp_hfp.btsnoop

.DEFAULT_GOAL := $(VDEV_SAVED_GOAL)
