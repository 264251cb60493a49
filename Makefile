# Every target creates .venv and installs what it needs by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every install reads a lock (docs/installs.md): Python packages from requirements/*.lock with
# their hashes (uv, bootstrapped by pip from requirements/tools.lock), npm packages from
# npm/package-lock.json (npm ci). `make lock` is the one way the locks change.
LOCKS := requirements/dev.lock requirements/tools.lock
# npm packages (npm/package.json): the Amazon States Language validator, hls.js (the player
# the tests and the viewer use), axe-core (MPL-2.0: the accessibility checker the viewer's
# tests inject into its pages; never served by the product) and acorn (MIT: the JavaScript
# parser the house rules read the viewer's functions with, tests/test_architecture.py).
# Every one is open source: tests/test_licences.py checks, docs/licences.md lists them.
# The folder is emptied first, so it holds exactly the locked packages.
NPM_DIR := .cache/npm
NPM_STAMP := $(NPM_DIR)/.installed
# The browser the tests play video in: the distribution's Chromium (it decodes H.264).
CHROMIUM ?= /usr/bin/chromium

export ASL_VALIDATOR := $(abspath $(NPM_DIR))/node_modules/.bin/asl-validator
export HLS_JS := $(abspath $(NPM_DIR))/node_modules/hls.js/dist/hls.min.js
export AXE_CORE := $(abspath $(NPM_DIR))/node_modules/axe-core/axe.min.js
export CHROMIUM
# The CDK's jsii runtime warns at every start on Node 20; the warning is not ours to fix.
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1

# Two workers: CI and most laptops have at least two cores, and half the suite waits on
# moto servers, subprocesses and a browser rather than on the CPU. Grouped (loadgroup,
# tests/conftest.py): the browser's tests on one worker, a module's shared fixture built once.
PYTEST_ARGS ?= -n 2 --dist loadgroup

.PHONY: install lock chromium test test-deep lint bench demo synth clean

install: $(STAMP) $(NPM_STAMP)

# Bytecode: the packages are compiled as they are installed (uv does not by default, pip
# did), and our own modules and pytest's rewritten tests are cached as Python does by default,
# even where the machine's environment says PYTHONDONTWRITEBYTECODE (__pycache__ is ignored
# by git): without both, every process of a run compiled moto, botocore and the CDK anew, and
# collecting the suite took 31 s instead of 6 (docs/installs.md).
unexport PYTHONDONTWRITEBYTECODE

# A new venv whenever a lock changes, so it holds exactly the lock; the project itself is
# installed editable without build isolation (its build backend, setuptools, is locked too).
$(STAMP): pyproject.toml $(LOCKS)
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements/tools.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode --require-hashes \
		-r requirements/dev.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e .
	touch $@

$(NPM_STAMP): npm/package.json npm/package-lock.json
	rm -rf $(NPM_DIR)
	mkdir -p $(NPM_DIR)
	cp npm/package.json npm/package-lock.json $(NPM_DIR)/
	cd $(NPM_DIR) && npm ci --silent --no-audit --no-fund
	touch $@

# Refresh every lock on purpose and print what changed (requirements/refresh.py); with
# KEEP=1, lock a changed input (pyproject.toml, npm/package.json) keeping every other pin.
lock: $(STAMP)
	$(BIN)/python requirements/refresh.py $(if $(KEEP),--keep)

# Installed from the distribution when missing and we are root; otherwise we say how.
chromium:
	@if [ -x "$(CHROMIUM)" ] || command -v "$(CHROMIUM)" >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium from the distribution (apt-get install chromium)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
		echo "Chromium is missing: run 'sudo apt-get install chromium' (Debian/Ubuntu)," \
			"or set CHROMIUM=/path/to/chromium, then run make test again." >&2; \
		exit 1; \
	fi

test: install chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Everything at full depth (docs/testing.md#tiers): the property tests with random examples
# and ten times as many (tests/conftest.py's "deep" profile; `make test` runs them
# deterministically, "ci"), and the long runs marked `deep` that `make test` leaves out.
test-deep: install chromium
	HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: install
	$(BIN)/python -m bench

demo: install
	$(BIN)/video-index local --demo

synth: $(STAMP)
	$(BIN)/python app.py

clean:
	rm -rf $(VENV) .cache cdk.out .pytest_cache .mypy_cache .ruff_cache .hypothesis
