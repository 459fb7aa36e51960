# Issue 29's vendor oracles (Tests/VendorOracles/README.md). Included by the top-level Makefile.
#   make oracles-venv   .venv-oracles at the repo root: requirements.txt (Home Assistant's parser
#                       libraries, bleparser, PyYAML) from PyPI, dependencies pinned by constraints.txt
#   make test-vendors   the advertising plugins against the oracles' test vectors and against the
#                       real captures in ../shared (~30 s); needs a built bluesift ($(BIN), or BIN=…)
# The requirements are (re)installed only when requirements.txt or constraints.txt is newer than
# the stamp. Where the venv cannot be made or pip cannot install them, test-vendors prints one
# line why and is SKIPPED (exit 0).
# Included anywhere, this file does not change the including Makefile's default goal.
ORACLES_SAVED_GOAL := $(.DEFAULT_GOAL)
# constraints.txt was resolved on CPython 3.11: prefer it where several Pythons are installed.
ORACLES_PYTHON ?= $(shell command -v python3.11 2>/dev/null || echo python3)
ORACLES_VENV := .venv-oracles
ORACLES_PY := $(ORACLES_VENV)/bin/python
ORACLES_DIR := Tests/VendorOracles
ORACLES_STAMP := $(ORACLES_VENV)/.requirements.stamp
BIN ?= .build/debug/bluesift

.PHONY: oracles-venv test-vendors

oracles-venv: $(ORACLES_STAMP)

$(ORACLES_STAMP): $(ORACLES_DIR)/requirements.txt $(ORACLES_DIR)/constraints.txt
	@[ -x $(ORACLES_PY) ] || $(ORACLES_PYTHON) -m venv $(ORACLES_VENV) || { rm -rf $(ORACLES_VENV); \
	  echo "ERROR: $(ORACLES_PYTHON) -m venv failed (python3-venv missing?)"; exit 1; }
	$(ORACLES_PY) -m pip install -q --disable-pip-version-check \
	  -r $(ORACLES_DIR)/requirements.txt -c $(ORACLES_DIR)/constraints.txt
	@touch $@

# The venv's install log is kept only to name the reason of a skip: pip's first ERROR line.
# No __pycache__ is left in the tree (the scripts import each other).
test-vendors: deps-test
	@log=$$($(MAKE) --no-print-directory oracles-venv 2>&1); rc=$$?; \
	  if [ $$rc != 0 ]; then \
	    why=$$(printf '%s\n' "$$log" | grep -m1 -E '^ERROR' || printf '%s\n' "$$log" | tail -1); \
	    echo "test-vendors SKIPPED: the oracles could not be installed here: $$why"; exit 0; fi; \
	  PYTHONDONTWRITEBYTECODE=1 $(ORACLES_PY) $(ORACLES_DIR)/test_vendors.py --bluesift $(BIN)

.DEFAULT_GOAL := $(ORACLES_SAVED_GOAL)
