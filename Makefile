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

# The documentation (Sphinx: API reference, user guide, example gallery, the results and
# benchmark records) into docs/_build/html, warnings as errors, then a check that every
# relative link and anchor of the built pages resolves. The [docs] extra goes into .venv on
# first use (stamp .venv/.docs-installed). SEMISUP_DOCS_GALLERY (a regular expression on the
# example paths, default "/plot_": all) selects which examples run.
.PHONY: docs docs-check

$(VENV)/.docs-installed: pyproject.toml Makefile | venv
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

docs: venv $(VENV)/.docs-installed
	$(BIN)/python -m sphinx -b html -W --keep-going -q docs docs/_build/html
	$(BIN)/python docs/tools/check_links.py docs/_build/html

# `make docs`, then the index, a user-guide page, an example and an API page rendered by
# headless Chromium (installed with apt when missing and run as root): fails on a blank
# page or one without its expected headings; the screenshots go to docs/_build/render/.
docs-check: docs
	$(BIN)/python docs/tools/render_check.py docs/_build/html --out docs/_build/render
