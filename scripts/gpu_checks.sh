#!/usr/bin/env bash
# The GPU checks and timings of docs/neural_agents.md, "On a GPU", in one run on a CUDA machine
# (about 8 minutes on one H200): the gpu-marked tests, bench_neural with CUDA graphs on and off,
# and [S0] figure 1(d)(e) at the paper's 50 seeds for HORIZON rounds (default 300; 10000 is the
# paper's). Logs go to OUT (default ./gpu-logs). Run from the repository root:
#   bash scripts/gpu_checks.sh [HORIZON]
set -u
horizon=${1:-300}
out=${OUT:-gpu-logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
s0=Neural-ES,Neural-ES-DT,NeuralUCB,NeuralTS,Neural-PHE
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
python3 -m pytest -m gpu tests/agents/test_neural_graphs.py -n 6 -p no:cacheprovider -q -rA 2>&1 | tee "$out/tests.log" \
  | grep -E "round [0-9]|choices equal|passed|failed|Error"
for graphs in 1 0; do
  python3 scripts/bench_neural.py --device cuda --cuda_graphs $graphs --parts 13 --N 50 --T 300 --repeat 1 \
    --agents $s0 2>&1 | tee -a "$out/bench.log"
done
python3 scripts/bench_neural.py --device cpu --threads 4 --parts 13 --N 50 --T 100 --repeat 1 --agents Neural-ES \
  2>&1 | tee -a "$out/bench.log"
for panel in fig1d fig1e; do
  python3 scripts/s0_fig1.py --panels $panel --horizon "$horizon" --seeds 50 --batch 50 --backend inprocess \
    --device cuda --out "$out/s0" --quiet 2>&1 | tee -a "$out/s0.log"
done
