# Two commands set up a fresh machine from nothing (Python >= 3.11 and make):
#   make run    the main job
#   make test   the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# pytest-xdist workers; the suite is sized for a 2-core machine
JOBS   ?= 2

.PHONY: run test install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

run: $(STAMP)
	$(PY) -m gpubcast bench --quick

test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
