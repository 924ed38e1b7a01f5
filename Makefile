# Everything installs into .venv; `make train` and `make test` work on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install train test test-learning lint docs bench bench-train ladder dist baselines clean

# setuptools notes on every editable install of this layout that folders named like the
# packages may shadow them; nothing new here (the checkout is the package): kept quiet
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install -q -e

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch==2.13.0 first where no torch is present: a CPU wheel on these machines
# (an unpinned torch would pull a multi-GB CUDA build). Elsewhere, pyproject's
# range lets users keep their own torch. `make train` installs the package with its
# `train` extra (torch, TensorBoard, matplotlib; `pip install .` alone is the env without
# them); `make test` adds the extras the tests exercise (Ray, RLlib, SB3, OpenSpiel,
# TorchRL, `web`: Starlette and uvicorn for `scopa serve`, selenium; notebook tools,
# build and twine; `docs`: Sphinx, furo, MyST for the site).
$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install -q torch==2.13.0
	$(EDITABLE) ".[train]"
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(EDITABLE) ".[test,train,web,sb3,ray,rllib,openspiel,torchrl,docs]"
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed
	$(EDITABLE) ".[train,docs]"
	touch $@

install: $(VENV)/.installed

# the shipped 2-player recipe (configs/recipe.yaml: six stages, one run folder). Run
# again after a stop, it goes on where it stopped; CONFIG=FILE trains another config.
CONFIG ?= configs/recipe.yaml
train: install
	$(BIN)/python train.py --config $(CONFIG)

# the documentation site, strict (docs/README.md): any warning (a broken link, a missing
# name, a page in no table of contents) fails it, and every one is listed
SPHINX := $(BIN)/sphinx-build -q -W --keep-going -n -b html -d docs/_build/doctrees docs site

# the site in site/ (open site/index.html), from the docstrings, the config and the pages
docs: $(VENV)/.installed-docs
	$(SPHINX)

# the site's strict build first (tests/test_docs_site.py reads what it built), then pytest
test: $(VENV)/.installed-test
	$(SPHINX)
	SCOPA_DOCS_SITE=site $(BIN)/python -m pytest -q

# the tests that check training learns (pytest marker `learning`; `make test` runs them too)
test-learning: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m learning

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .

bench: install
	$(EDITABLE) ".[bench]"
	taskset -c 0 $(BIN)/python benchmarks/env_throughput.py

# training throughput of the recipe's PPO stage, piece by piece and end to end
bench-train: install
	$(BIN)/python benchmarks/train_throughput.py

# the leaderboard in docs/ladder/ (README.md, ladder.md, CSV, JSON, PNG): every built-in
# agent, LADDER_HANDS paired deals per pair; pairs already played are reused
LADDER_AGENTS ?= random greedy expert pimc pimc:worlds=24,depth=6 pimc:worlds=48,depth=8 pretrained pretrained:search=on
LADDER_HANDS ?= 1000
LADDER_MATCHES ?= 0
ladder: install
	$(BIN)/scopa ladder $(LADDER_AGENTS) --hands $(LADDER_HANDS) --matches $(LADDER_MATCHES) --seed 2026 --workers 2 --out docs/ladder

# the sdist and the wheel in dist/, checked as PyPI would (tests/test_wheel.py builds and
# installs them in a fresh venv)
dist: $(VENV)/.installed-test
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# the algorithm baselines in docs/baselines/ (README.md's table, curves.png, baselines.json):
# the kit's PPO and DMC (BASELINES_SEEDS seeds each), SB3's MaskablePPO, RLlib's PPO and
# OpenSpiel's DQN (one
# seed each), BASELINES_MINUTES of training each, one at a time; finished runs are reused
BASELINES_MINUTES ?= 20
BASELINES_SEEDS ?= 3
baselines: install
	$(BIN)/pip install -q -e ".[train,sb3,rllib,openspiel]"
	$(BIN)/python benchmarks/baselines.py --minutes $(BASELINES_MINUTES) --seeds $(BASELINES_SEEDS)

clean:
	rm -rf $(VENV) build dist *.egg-info site docs/_build docs/_generated docs/api docs/notebooks
