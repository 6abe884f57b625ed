# The two set-up commands: `make run` and `make test`. Each creates .venv when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test

.PHONY: run test bench soak fuzz lint clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/egm run --sim $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "not soak and not fuzz and not bench" $(ARGS)

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(ARGS)

soak: $(STAMP)
	$(BIN)/python -m pytest -m soak -p no:xdist $(ARGS)

fuzz: $(STAMP)
	$(BIN)/python -m pytest -m fuzz -p no:xdist $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check firmware hal drivers sim_hardware host tests

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
