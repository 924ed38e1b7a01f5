# Everything installs into .venv; `make train` and `make test` work on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONFIG ?= configs/default.yaml

.PHONY: install train test lint bench bench-train clean

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch==2.13.0 first where no torch is present: a CPU wheel on these machines
# (an unpinned torch would pull a multi-GB CUDA build). Elsewhere, pyproject's
# range lets users keep their own torch.
$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test,web,sb3]"
	touch $@

install: $(VENV)/.installed

train: install
	$(BIN)/python train.py --config $(CONFIG)

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/pip install -q -e ".[bench]"
	taskset -c 0 $(BIN)/python benchmarks/env_throughput.py

# training throughput of the default config, piece by piece and end to end
bench-train: install
	$(BIN)/python benchmarks/train_throughput.py --config $(CONFIG)

clean:
	rm -rf $(VENV) build *.egg-info
