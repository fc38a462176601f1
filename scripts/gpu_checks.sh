#!/usr/bin/env bash
# The GPU checks and timings of docs/neural_agents.md, "On a GPU", and the neural track's GPU
# references (docs/bench_costs.md), in one run on a CUDA machine. Run from the repository root:
#   bash scripts/gpu_checks.sh [HORIZON]
# 1. with REFS=AGENTS (e.g. REFS=Neural-ES-DT): `bench regen --track neural --device cuda` of those
#    agents into the package's references, resuming the runs of WORK (default gpu-work); the suite's
#    real-data cells need $CTXBANDITS_DATA (uci/ and mnist/ of the data home) on that machine; the
#    references folder comes back as OUT/refs.tgz;
# 2. the gpu-marked tests (about 30 s on an H200);
# 3. [S0] figure 1(d)(e) at the paper's 50 seeds for HORIZON rounds (default 1000: 81 s on an H200;
#    10000 is the paper's, about 11 minutes estimated: more than one 10-minute command of a lent
#    machine), each panel's five agents as five processes;
# 4. bench_neural with CUDA graphs on and off (one and 50 instances; about 3 minutes).
# Logs go to OUT (default ./gpu-logs); each step has a time limit, so the script ends on its own.
set -u
horizon=${1:-1000}
out=${OUT:-gpu-logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
s0=Neural-ES,Neural-ES-DT,NeuralUCB,NeuralTS,Neural-PHE
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
if [ -n "${REFS:-}" ]; then
  python3 -m gym_ctxbandits.cli bench regen --track neural --agents "$REFS" --device cuda --work "${WORK:-gpu-work}" \
    2>&1 | tee "$out/refs.log"
  tar czf "$out/refs.tgz" gym_ctxbandits/bench/references/bakeoff-v1-neural     # the references and manifest, to copy back
fi
timeout 120 python3 -m pytest -m gpu tests/agents/test_neural_graphs.py -n 6 -p no:cacheprovider -q -rA 2>&1 \
  | tee "$out/tests.log" | grep -E "choices equal|passed|failed|Error"
start=$(date +%s)
fig=$(mktemp -d)                 # hundreds of result files: they come back as one archive, OUT/s0.tgz
timeout 1500 python3 scripts/s0_fig1.py --panels fig1d,fig1e --horizon "$horizon" --seeds 50 --batch 50 \
  --backend processes --workers 10 --device cuda --out "$fig/s0" --quiet 2>&1 | tee "$out/s0.log" | grep -v "jobs ("
echo "figure 1(d)(e), $horizon rounds: $(( $(date +%s) - start )) s of wall time"
tar czf "$out/s0.tgz" -C "$fig" s0
for graphs in 1 0; do
  timeout 150 python3 scripts/bench_neural.py --device cuda --cuda_graphs $graphs --parts 13 --N 50 --T 300 \
    --repeat 1 --agents $s0 2>&1 | tee -a "$out/bench.log"
done
