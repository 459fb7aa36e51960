# Python virtual environment for the virtual Bluetooth rig (Tests/VirtualDevice).
# Included by the top-level Makefile. `make venv` creates .venv at the repo root
# and (re)installs requirements only when the requirements file is newer than the stamp.
# pip does not reach the index for a pinned requirement that is already installed.
PYTHON ?= python3
VENV := .venv
VENV_PY := $(VENV)/bin/python
VDEV_DIR := Tests/VirtualDevice
VENV_STAMP := $(VENV)/.requirements.stamp
VDEV_SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: venv venv-clean

venv: $(VENV_STAMP)

# A fresh Debian python3 lacks ensurepip until python3-venv is installed:
# try first, install the package only when creating the venv fails.
$(VENV_PY):
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  rm -rf $(VENV); \
	  echo "python3 -m venv failed: installing python3-venv"; \
	  $(VDEV_SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(VDEV_SUDO) apt-get install -y -qq --no-install-recommends python3-venv >/dev/null && \
	  $(PYTHON) -m venv $(VENV); }

$(VENV_STAMP): $(VDEV_DIR)/requirements.txt | $(VENV_PY)
	$(VENV_PY) -m pip install -q --disable-pip-version-check -r $(VDEV_DIR)/requirements.txt
	@touch $@

venv-clean:
	rm -rf $(VENV)
