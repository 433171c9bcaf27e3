# Two entry points: `make demo` (the main job) and `make test` (the test suite).
# Each creates its own virtual environment in .venv and installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[all]"

demo: venv
	$(BIN)/semisup demo

test: venv
	$(BIN)/python -m pytest --runslow

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
