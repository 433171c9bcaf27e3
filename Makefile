# Two entry points: `make demo` (the main job) and `make test` (the test suite).
# Each creates its own virtual environment in .venv and installs what it needs, once: the
# install is redone only when pyproject.toml or this Makefile changes (stamp .venv/.installed).
# `make test-min` checks the declared dependency floors in a second environment, .venv-min.
PYTHON   ?= python3
VENV     ?= .venv
BIN      := $(VENV)/bin
VENV_MIN ?= .venv-min
BIN_MIN  := $(VENV_MIN)/bin

# The floors declared in pyproject.toml's [project] dependencies, turned into exact pins
# ("numpy>=1.23.2" -> "numpy==1.23.2"), so the minimum-versions run cannot drift from them.
MIN_PINS := $(shell sed -n 's/^ *"\(numpy\|scipy\|scikit-learn\|joblib\|threadpoolctl\)>=\([0-9.]*\)".*/\1==\2/p' pyproject.toml)
# Test tools only: no optional extra (numba, pynndescent, cvxpy, matplotlib), so the suite
# also proves that every test needing one of them skips cleanly without it.
MIN_TEST_TOOLS := pytest pytest-timeout hypothesis

.PHONY: demo test test-min venv venv-min print-min-pins clean wheel-check gpu-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	echo '*' > $(VENV)/.gitignore
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(BIN)/semisup demo

test: venv
	$(BIN)/python -m pytest --runslow

$(BIN_MIN)/python:
	$(PYTHON) -m venv $(VENV_MIN)
	echo '*' > $(VENV_MIN)/.gitignore
	$(BIN_MIN)/python -m pip install --quiet --upgrade pip

$(VENV_MIN)/.installed: pyproject.toml Makefile | $(BIN_MIN)/python
	@test -n "$(MIN_PINS)" || { echo "no dependency floors found in pyproject.toml" >&2; exit 1; }
	$(BIN_MIN)/python -m pip install --quiet --only-binary=numpy,scipy,scikit-learn \
	    $(MIN_PINS) $(MIN_TEST_TOOLS) -e .
	$(BIN_MIN)/python -m pip check
	touch $@

venv-min: $(VENV_MIN)/.installed

# The fast suite (no --runslow) on the declared minimum versions.
test-min: venv-min
	$(BIN_MIN)/python -c "import numpy, scipy, sklearn; print('minimum versions: numpy', numpy.__version__, 'scipy', scipy.__version__, 'scikit-learn', sklearn.__version__)"
	$(BIN_MIN)/python -m pytest

print-min-pins:
	@echo $(MIN_PINS)

# the GPU engine's device check (a CUDA machine with CuPy; nothing installed): the GPU tests
# and the MNIST benchmark, its record in $$OUT (tools/gpu_check.sh)
gpu-check:
	tools/gpu_check.sh

clean:
	rm -rf $(VENV) $(VENV_MIN) $(VENV_WHEEL) build dist src/*.egg-info .pytest_cache

# The package as a user gets it: the sdist and the wheel built from the tree (PEP 517, in an
# isolated build environment), the wheel installed (not editable) into a fresh environment
# outside the checkout, then `semisup demo` and a smoke test run from there, so nothing is
# imported from src/. The sdist must build the same wheel (checked by building from it too).
VENV_WHEEL ?= .venv-wheel
wheel-check: venv
	rm -rf dist $(VENV_WHEEL)
	$(BIN)/python -m pip install --quiet build
	$(BIN)/python -m build --sdist --wheel --outdir dist .
	$(BIN)/python -m build --wheel --outdir dist/from-sdist dist/semisup-*.tar.gz
	$(PYTHON) -m venv $(VENV_WHEEL)
	echo '*' > $(VENV_WHEEL)/.gitignore
	$(VENV_WHEEL)/bin/python -m pip install --quiet dist/semisup-*.whl
	cd /tmp && $(abspath $(VENV_WHEEL))/bin/python -c "import semisup, sys; \
	    assert 'site-packages' in semisup.__file__, semisup.__file__; \
	    print('installed wheel:', semisup.__file__)"
	cd /tmp && $(abspath $(VENV_WHEEL))/bin/semisup --version
	cd /tmp && $(abspath $(VENV_WHEEL))/bin/semisup demo
	cd /tmp && $(abspath $(VENV_WHEEL))/bin/python $(abspath tools/smoke_test.py)

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
