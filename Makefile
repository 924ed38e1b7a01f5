# Everything installs into .venv; `make train` and `make test` work on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONFIG ?= configs/default.yaml

.PHONY: install train test test-learning lint bench bench-train ladder clean

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch==2.13.0 first where no torch is present: a CPU wheel on these machines
# (an unpinned torch would pull a multi-GB CUDA build). Elsewhere, pyproject's
# range lets users keep their own torch.
$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test,web,sb3,ray,rllib]"
	touch $@

install: $(VENV)/.installed

# the recipe of the shipped 2-player weights: resumable stages, each from the one before
# (STAGES: run name, then config). Stage 1 is PPO from scratch (configs/default.yaml);
# stage 2 fine-tunes it with the exact last-deal teacher (configs/finetune.yaml); stage 3
# fits a last-deal scorer to exact values of its last deals (configs/last_deal.yaml);
# stage 4 fits the network to its own scores averaged over the 6 suit views
# (configs/suit_distill.yaml); stage 5 fits it to those scores plus the move values of
# pimc:worlds=48,depth=5 on 200,000 of its decisions (configs/search_distill.yaml). A
# finished stage (runs/NAME-*/checkpoints/final.pt) is not run again; a stopped one is
# named with its `train.py --resume RUN` line, then `make train` goes on from it. With
# CONFIG=FILE, `make train` runs that one config instead.
STAGES := stage1:configs/default.yaml stage2:configs/finetune.yaml stage3:configs/last_deal.yaml \
          stage4:configs/suit_distill.yaml stage5:configs/search_distill.yaml
train: install
ifeq ($(origin CONFIG),command line)
	$(BIN)/python train.py --config $(CONFIG)
else
	@init=; \
	for stage in $(STAGES); do \
	  name=$${stage%%:*}; config=$${stage#*:}; \
	  run=$$(ls -d runs/$$name-* 2>/dev/null | tail -n 1); \
	  if [ -z "$$run" ] || { [ ! -f "$$run/checkpoints/final.pt" ] && [ ! -f "$$run/checkpoints/latest.pt" ]; }; then \
	    $(BIN)/python train.py --config $$config --set name=$$name $${init:+--set init_from=$$init} || exit $$?; \
	    run=$$(ls -d runs/$$name-* | tail -n 1); \
	  fi; \
	  if [ ! -f "$$run/checkpoints/final.pt" ]; then \
	    echo "$$name ($$run) has not finished: $(BIN)/python train.py --resume $$run, then make train"; exit 1; \
	  fi; \
	  init=$$run/policy.pt; \
	done; \
	echo "the recipe's weights: $$init; ship them with: $(BIN)/python -m scopa_train.report export $${init%/policy.pt}/checkpoints/final.pt scopa_policy/pretrained/default.pt"
endif

test: install
	$(BIN)/python -m pytest -q

# the tests that check training learns (pytest marker `learning`; `make test` runs them too)
test-learning: install
	$(BIN)/python -m pytest -q -m learning

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/pip install -q -e ".[bench]"
	taskset -c 0 $(BIN)/python benchmarks/env_throughput.py

# training throughput of the default config, piece by piece and end to end
bench-train: install
	$(BIN)/python benchmarks/train_throughput.py --config $(CONFIG)

# the leaderboard in docs/ladder/ (README.md, ladder.md, CSV, JSON, PNG): every built-in
# agent, LADDER_HANDS paired deals per pair; pairs already played are reused
LADDER_AGENTS ?= random greedy expert pimc pretrained pretrained:endgame=exact
LADDER_HANDS ?= 2000
ladder: install
	$(BIN)/scopa ladder $(LADDER_AGENTS) --hands $(LADDER_HANDS) --seed 2026 --workers 2 --out docs/ladder

clean:
	rm -rf $(VENV) build *.egg-info
