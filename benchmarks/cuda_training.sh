#!/usr/bin/env bash
# The `device: cuda` path on a machine with a CUDA GPU, in one go (about 6 minutes on one
# H200 with 16 CPU cores): the CUDA tests, training throughput with the learner on the GPU
# (deterministic, as training sets it, and with torch's deterministic algorithms
# switched off, to price them) and on that machine's CPU, then the training tests with
# `device: auto` (which picks the GPU there). Each part has its own time limit and writes
# its own log under OUT (default: ./cuda-check).
#
#     bash benchmarks/cuda_training.sh [OUT]
set -u
cd "$(dirname "$0")/.."
out=${1:-${OUT:-cuda-check}}
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

part() {  # part NAME SECONDS COMMAND...: run with a time limit, log to OUT/NAME.log
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  echo "== $name: exit $? in $((SECONDS - t0)) s"
  tail -n 4 "$out/$name.log"
}

{ nvidia-smi -L; "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"; nproc; } 2>&1 | tee "$out/machine.txt"

part cuda_tests 150 "$py" -m pytest -q -p no:cacheprovider tests/test_cuda.py -rs

bench=(benchmarks/train_throughput.py --updates 3 --repeats 1 --json)
part throughput_cuda 110 "$py" "${bench[@]}" --set run.device=cuda
part throughput_cuda_nondeterministic 110 "$py" -c "
import runpy, sys, torch
torch.use_deterministic_algorithms = lambda *a, **k: None  # what training turns on
sys.argv = ['train_throughput.py', *sys.argv[1:]]
runpy.run_path('benchmarks/train_throughput.py', run_name='__main__')
" "${bench[@]:1}" --set run.device=cuda
part throughput_cpu 110 "$py" "${bench[@]}" --set run.device=cpu

part training_tests_auto 240 "$py" -m pytest -q -p no:cacheprovider \
  tests/test_train_run.py tests/test_train_units.py tests/test_suit_distill.py \
  tests/test_last_deal.py tests/test_endgame_training.py
