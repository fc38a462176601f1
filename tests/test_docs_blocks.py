"""Every fenced block of README.md and docs/*.md runs as written, at small sizes (issue 19 item 6).

A reader copies blocks out of the docs; this test does the same with every block, by its tag:

- ```python: executed in order in a temp folder, the blocks of a page sharing one namespace (a
  reader's session). Agents a page registers are unregistered afterwards.
- ```bash / ```sh / ```shell, and the `$ ` lines of ```console: split into commands (backslash
  continuations, open quotes and heredocs joined; `&&` chains split). A command is
  * an install step (`python3 -m venv`, `. .venv/bin/activate`, `pip install`): checked for form
    (the extras it names exist in pyproject.toml; never `gym-ctxbandits[...]`, which is not
    published), not run;
  * on SKIP (it needs the datasets or a GPU, or minutes to days; each entry says which, and how
    long the command takes): not run, but its arguments are checked: a paper script runs with
    `--dry-run` (panels, --envs, env ids and keywords, agents), `ctxbandits run` is parsed and its
    comparison checked, another script's flags must appear in its --help;
  * anything else: run by bash in a temp folder after the REWRITES (smaller sizes), `ctxbandits`
    and `python` being this checkout's (shims on PATH, PYTHONPATH, `scripts/` linked there); a
    plain `ctxbandits ...` command (no shell syntax, no --import) runs in this process instead,
    as its entry point runs it (1-2 s of imports less a command: `run_ctxbandits`).
- ```toml / ```yaml: a file that the page's commands read, written into the temp folder under the
  name the prose just before the block gives (`name.toml`).
- ```text / ```output: output, ignored. A block with another tag, or none, fails: tag it.

So a block added to the docs either runs, or fails here until it is made to run or put on SKIP.
The paper scripts' own --quick runs are in tests/test_scripts.py. Tests never use the network
(tests/conftest.py); with $CTXBANDITS_DATA unset nothing here reads a dataset.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import runpy
import shlex
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON, SHELL, FILES, OUTPUT = {"python"}, {"bash", "sh", "shell", "console"}, {"toml", "yaml"}, {"text", "output"}

# Commands not run: (normalized command: `key`) -> why, and how long the command takes as written.
SKIP = {
    # README.md
    "python -m pytest": "the test suite itself: about 5 min on 2 idle cores (291 s measured)",
    "python scripts/s0_fig1.py": "days of CPU at the paper's scale (its panels fig1a and fig1b: about 7 min on 2 "
                                 "shared cores)",
    "python scripts/s1_fig1.py": "about 2 h on 2 free cores (docs/glm_agents.md; the measured runs took 95 + 75 min "
                                 "with --batch 50 on shared cores)",
    "python scripts/s1_fig2.py": "needs MNIST and Fashion-MNIST; about 300 CPU-hours at the paper's scale",
    "python scripts/s2_figs.py": "needs the UCI datasets and MNIST; fig1 + fig2 17 min on 2 loaded cores, mnist at "
                                 "T = 2000 and 10 seeds not measured (T = 1000, 2 seeds: 5 min)",
    "python scripts/s3_fig3a.py": "about 13 min on 2 cores",
    "python scripts/s3_fig3.py": "needs Shuttle and the hate-speech corpus; hours on a CPU (the reduced runs of "
                                 "docs/s3_neural_agents.md took 11 to 85 min a panel)",
    "python scripts/s3_moderation.py": "needs the hate-speech corpus; a GPU's job (about 0.4 s a round fine-tuning "
                                       "on this CPU, 10^4 rounds x 10 seeds x 2 fine-tuned agents)",
    "python scripts/s4_figs.py": "about 45 min on 2 cores",
    "CTXBANDITS_DATA=~/datasets python scripts/real_data_linear.py": "needs the datasets; about 30 min on 2 cores",
    # docs/datasets.md
    "python data/make_fixtures.py --source ~/datasets": "rewrites data/fixtures from the real datasets (not in a fresh "
                                                        "clone); about 1 s",
    # docs/reproducibility.md
    "ctxbandits bench verify": "needs the datasets; the fixed sample of tests/test_bench_reproduce.py, 21 CPU-s (33 s "
                               "on 2 loaded cores)",
    "ctxbandits bench verify --all --quiet": "needs the datasets; 13 CPU-min (47 min on 2 cores at a load of 6); exits "
                                             "1 on an AMD CPU, where Neural-PHE's tuned rows of s4-changing-1 part",
    "ctxbandits bench verify --suite bakeoff-v1 --track neural --agents NeuralUCB --all":
        "needs the datasets; 15 s on 2 loaded cores",
    # docs/glm_agents.md
    "python scripts/s1_fig1.py --horizon 2000 --seeds 50 --batch 50 --workers 2 --out /tmp/s1_2000":
        "111 s on 2 cores",
    # docs/offpolicy_coverage.md (and offpolicy.md)
    "python scripts/ope_coverage.py": "19 min on 2 loaded cores (783 CPU-s)",
    "python scripts/ope_coverage.py --tau-grid 0.1,0.15,0.2,0.3,0.5,0.7,1 --first-seed 1000 --seeds 20":
        "41 s on 2 shared cores (29 CPU-s)",
    "python scripts/ope_coverage.py --rounds 5000 --epsilons 0.1 --taus  --draws 200": "21 min on 2 shared cores "
                                                                                        "(889 CPU-s)",
    "python scripts/ope_obd.py --bts-prior obp-0.4.1-py3-none-any.whl": "needs the Open Bandit sample and obp's "
                                                                        "wheel; 15 s on 2 shared cores",
    # docs/bench_nonstationary.md and bench_ranking.md: nonstationary-v1 and ranking-v1 (2 cores shared with other jobs)
    'ctxbandits bench run --suite nonstationary-v1 --agents D-LinUCB --backend processes --workers 2 --out results/ns':
        "Random and D-LinUCB's report track: 17 CPU-s, 24 s of wall time on 2 shared cores",
    'ctxbandits bench report results/ns':
        'needs the folder above; 2.6 CPU-s (7.5 s) with the 17 shipped agents',
    'OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ctxbandits bench regen --suite nonstationary-v1 --agents Random,LinUCB,'
    'LinTS,D-LinUCB,SW-LinUCB,D-LinTS,SW-LinTS,dLinUCB,UCB1,kl-UCB,TS,D-UCB,SW-UCB,D-TS,SW-TS,CUSUM-UCB,M-UCB,'
    'GLR-klUCB --backend processes --workers 2 --work results/ns-refs':
        "rewrites the package's references; 357 s of wall time (299 CPU-s) on 2 shared cores",
    'ctxbandits bench run --suite ranking-v1 --quick --agents CascadeUCB1,TopRank --out results/ranking-quick':
        "needs the data home's ranking/ (its fitted PBM cells); 2.2 s",
    'ctxbandits bench run --suite ranking-v1 --agents CascadeTS --backend processes --workers 2 --out results/ranking':
        "needs the data home's ranking/; Random and CascadeTS's report track: 62 CPU-s, 61 s of wall time",
    'ctxbandits bench report results/ranking':
        'needs the folder above; 3.1 CPU-s (8 s) with the 8 shipped agents',
    'ctxbandits bench run --suite ranking-v1 --track pbm --agents PBM-UCB --out results/ranking-pbm':
        "needs the data home's ranking/; 15 CPU-s, 17 s of wall time",
    'OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ctxbandits bench regen --suite ranking-v1 --agents Random,CascadeUCB1,'
    'CascadeKL-UCB,CascadeTS,CascadeLinUCB,CascadeLinTS,TopRank,RankedBandits,TopK --backend processes --workers 2 '
    '--work results/ranking-refs':
        "needs the data home's ranking/, and rewrites the package's references; 516 s of wall time (456 CPU-s)",
    'OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ctxbandits bench regen --suite ranking-v1 --track pbm --agents Random,'
    'CascadeUCB1,CascadeKL-UCB,CascadeTS,CascadeLinUCB,CascadeLinTS,TopRank,RankedBandits,TopK,PBM-UCB,PBM-PIE '
    '--backend processes --workers 2 --work results/ranking-pbm-refs':
        "needs the data home's ranking/, and rewrites the package's references; 42 s of wall time (38 CPU-s)",
    # docs/oracle_agents.md: RegCB's search with copies of the oracle, a round 5-10 ms
    "OPENBLAS_NUM_THREADS=1 python scripts/bench_oracles.py --T 50 --repeat 2 --agents RegCB-opt(oracle='sgd', "
    "search=True),RegCB-elim(oracle='sgd', search=True)": "16 s on 2 shared cores (2 x 50 rounds of each)",
    # docs/slate_obd.md
    "python scripts/slate_obd.py": "needs the Open Bandit sample ($CTXBANDITS_DATA/obd); 5 s on 2 shared cores",
    "python scripts/slate_obd.py --simulate /tmp/obd_sim": "needs the Open Bandit sample (its users); writes 600,000 "
                                                           "rows (295 MB) to /tmp/obd_sim; 64 s on 2 shared cores",
    # docs/reproductions.md
    "python scripts/s0_fig1.py --panels fig1a,fig1b --batch 25 --figures docs/figures": "101 s on 2 idle cores",
    "python scripts/s0_fig1.py --panels fig1d,fig1e --horizon 2000 --seeds 5 --workers 1 --figures docs/figures":
        "36 min on 2 loaded cores",
    "OMP_NUM_THREADS=1 python scripts/s0_fig1.py --panels fig1d --horizon 5000 --seeds 10 --workers 1":
        "75 min on one core",
    "python scripts/s3_fig3a.py --figures docs/figures": "13 min on 2 cores",
    "python scripts/s1_fig1.py --horizon 10000 --seeds 10 --figures docs/figures": "26 min on 2 cores",
    "python scripts/s1_fig1.py --batch 50 --workers 2 --envs dim=5,dim=10": "95 min on 2 shared cores",
    "python scripts/s1_fig1.py --batch 50 --workers 2 --envs dim=20": "75 min on 2 shared cores",
    "python scripts/s4_figs.py --figures docs/figures": "about 45 min on 2 cores",
    # docs/s1_deep_agents.md
    "OMP_NUM_THREADS=1 CTXBANDITS_DATA=~/datasets python scripts/s1_fig2.py --horizon 2000 --seeds 4 --backend "
    "processes --workers 2 --out results/s1_fig2 --figures docs/figures": "needs MNIST and Fashion-MNIST; 20.5 min",
    "OMP_NUM_THREADS=1 CTXBANDITS_DATA=~/datasets ctxbandits run --env "
    "CtxBandit/MNISTTarget-v0,CtxBandit/FashionMNISTTarget-v0 --agents DeepFPL,DeepFL --seeds 4 --horizon 10000 "
    "--log-every 20 --backend processes --workers 2 --band se --out results/s1_fig2-long":
        "needs MNIST and Fashion-MNIST; 8.6 min",
    # docs/agents.md
    "python scripts/bench_neural.py --parts 4 --repeat 1 --profile Neural-ES,Ensemble++,EpiNet,NeuralLog-UCB-1,NeuralUCB":
        "about 60 min on 2 cores shared with four other jobs",
    "python scripts/bench_memory.py --agents GLM-FPL (theory),GLM-TSL (a=1)": "40 min on 2 loaded cores (the two "
                                                                              "units of 100 x 50,000 rounds)",
    # docs/s2_neurallog_agents.md
    "python scripts/s2_figs.py --panels features --seeds 5 --workers 1": "2.5 min on 2 loaded cores",
    "python scripts/s2_figs.py --panels fig1 --seeds 10 --workers 1 --figures docs/figures": "5 min on 2 loaded cores",
    "python scripts/s2_figs.py --panels fig2 --seeds 10 --backend inprocess --figures docs/figures":
        "needs Mushroom and Shuttle; about 11 min on 2 loaded cores",
    "python scripts/s2_figs.py --panels mnist --seeds 5 --horizon 2000 --workers 1 --figures docs/figures":
        "needs MNIST; 68 min on one core shared with two other jobs",
    "python scripts/s2_figs.py --panels obd --workers 1 --figures docs/figures": "needs the Open Bandit sample; 8 min",
    # docs/sanity.md
    "python scripts/sanity.py --seeds 5 --fresh-seeds 100:105 --workers 2 --markdown docs/sanity.md":
        "needs MNIST and the hate-speech corpus; about 2 h on 2 shared cores (4.1 CPU-hours)",
    "python scripts/sanity.py --agents BaSE,OTFLinUCB,OTFLinTS --seeds 5 --fresh-seeds 100:105 --workers 2 "
    "--markdown docs/sanity.md": "27 s on 2 shared cores (the three agents and Random at two homes, 10 seeds of "
                                 "T = 10,000)",
    "python scripts/sanity.py --agents SquareCB,FALCON,Oracle-Greedy,Oracle-epsilon-greedy,RegCB-elim,RegCB-opt,"
    "Cover,Cover-NU,Bag,Bag-greedy,VW,VW-epsilon,VW-Bag,VW-Cover-NU,VW-RegCB-opt,VW-SquareCB --seeds 5 "
    "--fresh-seeds 100:105 --workers 2 --markdown docs/sanity.md": "14 s on 2 cores (the 16 agents and Random on "
                                                                  "iris, 10 seeds of T = 2,000)",
    "python scripts/sanity.py --agents CascadeUCB1,CascadeKL-UCB,CascadeTS,RankedBandits,TopK,CascadeLinUCB,"
    "CascadeLinTS,PBM-UCB,PBM-PIE,TopRank,D-LinUCB,SW-LinUCB,D-LinTS,SW-LinTS,dLinUCB,UCB1,kl-UCB,TS,D-UCB,SW-UCB,"
    "D-TS,SW-TS,CUSUM-UCB,M-UCB,GLR-klUCB,Oracle-Restart --seeds 5 --fresh-seeds 100:105 --workers 2 --markdown "
    "docs/sanity.md": "99 s on 2 shared cores (the 26 agents and Random at five homes, 10 seeds each)",
    # docs/reproductions.md, [S4]
    "python scripts/s4_figs.py --panels sweep --workers 1 --figures docs/figures": "20 min on one loaded core",
    # docs/delayed.md and docs/reproductions.md, the delayed-feedback reproductions
    "python scripts/c11_table1.py": "482 s on 2 loaded cores (214 CPU-s)",
    # docs/reproductions.md, worlds that change and rankings (their --quick runs: tests/test_scripts.py)
    "python scripts/russac2019.py --backend inprocess": "7 min 12 s on one loaded core (334 CPU-s)",
    "python scripts/piecewise_bernoulli.py --backend inprocess": "4 min 12 s on one loaded core (162 CPU-s)",
    "python scripts/zong2016.py --backend inprocess": "27 min on one loaded core (491 CPU-s)",
    "python scripts/kveton2015.py --seeds 5 --backend inprocess": "7 min 27 s on one loaded core (437 CPU-s)",
    "python scripts/lagree2016.py --backend processes --workers 2": "needs the KDD click models (the data home's "
                                                                    "ranking/); 16 min 49 s on 2 workers (1,817 CPU-s)",
    "python scripts/v20_linear_delays.py": "377 s on 2 loaded cores (196 CPU-s)",
    "python scripts/v20_linear_delays.py --no-widening": "295 s on 2 loaded cores (191 CPU-s)",
    "python scripts/v20_linear_delays.py --authors-code": "289 s on 2 loaded cores (163 CPU-s)",
    "python scripts/v20_linear_delays.py --link logistic": "844 s on 2 loaded cores (299 CPU-s)",
    "python scripts/delay_regret.py": "363 s on 2 loaded cores (80 CPU-s)",
    "python scripts/batches.py --figures docs/figures": "1,078 s on 2 loaded cores (444 CPU-s)",
    # docs/s3_neural_agents.md
    "OMP_NUM_THREADS=1 CTXBANDITS_DATA=~/datasets python scripts/s3_fig3.py --horizon 2000 --seeds 5 --panels "
    "quadratic,neural": "about 23 min on 2 cores (quadratic 667 s, MLP teacher 733 s)",
    "OMP_NUM_THREADS=1 CTXBANDITS_DATA=~/datasets python scripts/s3_fig3.py --horizon 1000 --seeds 5 --panels "
    "shuttle --workers 1": "needs Shuttle; about 61 min on one core",
    "OMP_NUM_THREADS=1 CTXBANDITS_DATA=~/datasets python scripts/s3_fig3.py --horizon 2000 --seeds 5 --panels hate "
    "--workers 1": "needs the Davidson corpus; about 85 min on one core",
    "CTXBANDITS_DATA=~/datasets python scripts/s3_moderation.py --horizon 300 --seeds 2 --figures docs/figures":
        "needs the Davidson corpus; 22 min on 2 cores before the GPT agents' prefix cache (8-9x less a round since)",
    # docs/cluster.md: Ray's own commands start and stop clusters (`ray stop` stops every Ray of this user on the
    # machine, other jobs' too: never run here); tests/test_ray_cluster.py runs these paths on a cluster it starts
    "ctxbandits run --env CtxBandit/Logistic-v0 --agents Random,LinUCB,LinTS --seeds 4 --horizon 2000 --backend ray "
    "--out results/laptop-ray": "starts a local Ray; 12 s on 2 loaded cores",
    "ray get-auth-token --generate > /dev/null": "creates ~/.ray/auth_token, which turns token authentication on "
                                                 "for every later `ray start --head` of this user; about 2 s",
    "ray start --head --port=6379 --num-cpus=1 --object-store-memory=100000000 --include-dashboard=true":
        "starts a Ray head; 12 s idle, 19-34 s on 2 loaded cores",
    "ray start --address=127.0.0.1:6379 --num-cpus=1 --object-store-memory=100000000":
        "needs the head above; about 5 s",
    "ctxbandits run --env CtxBandit/Logistic-v0 --agents Random,LinUCB,LinTS --seeds 4 --horizon 2000 --backend ray "
    "--address 127.0.0.1:6379 --out results/two-nodes": "needs the two-node cluster above; about 10 s",
    "ctxbandits run --env CtxBandit/Logistic-v0 --agents Random,LinUCB,LinTS --seeds 4 --horizon 2000 --backend ray "
    "--address ray://127.0.0.1:10001 --out results/two-nodes-client": "needs the two-node cluster above; about 10 s",
    "ray stop": "stops every Ray process of this user on the machine (other jobs' too); about 5 s",
    "ray job submit --address http://127.0.0.1:8265 --working-dir . -- ctxbandits run --backend ray --address auto "
    "--env CtxBandit/Logistic-v0 --agents Random,LinUCB,LinTS --seeds 4 --horizon 2000 --out /tmp/results/job":
        "needs the two-node cluster above; about 15 s",
    "ctxbandits run --env CtxBandit/Logistic-v0 --agents Random,LinUCB,LinTS,GLM-ES --seeds 100 --horizon 10000 "
    "--backend ray --address ray://head.example.com:10001 --out results/cloud":
        "needs a cloud cluster; about 7 min of one core (the README's first command, 20 s for 5 seeds, x 20)",
    "python scripts/bench_backends.py": "about 2 min on 2 loaded cores",
    "python scripts/s0_fig1.py --panels fig1a --backend ray --address 127.0.0.1:6379 --out results/s0_ray":
        "needs the two-node cluster above; 23 s on 2 loaded cores",
    "python scripts/s0_fig1.py --panels fig1a --backend processes --workers 2 --out results/s0_processes":
        "33 s on 2 loaded cores",
    "CTXBANDITS_DATA=~/datasets python scripts/bench_gpt.py": "needs the Davidson corpus; about 10 min on 2 shared "
                                                                "cores (most of it the uncached path)",
    # docs/bench_pmlb.md and reproductions.md: pmlb-v1 needs the PMLB sets (2 cores shared with another job)
    "ctxbandits bench run --suite pmlb-v1 --agents LinUCB --backend processes --workers 2 --out results/pmlb":
        "needs the PMLB sets; Random 21 + LinUCB 180 CPU-s, 117 s of wall time",
    "ctxbandits bench report results/pmlb --bakeoff-agents LinUCB,Oracle-Greedy,RegCB-opt,Random":
        "needs the folder above; 29 CPU-s (75 s on the loaded cores) for five agents, the references among them",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench regen --suite pmlb-v1 --agents Random,LinUCB,Oracle-Greedy,RegCB-opt,"
    "SquareCB,Oracle-epsilon-greedy,VW-epsilon,Bag-greedy,Cover-NU --work results/pmlb-refs --backend processes "
    "--workers 2": "needs the PMLB sets, and rewrites the package's references; 580 s of wall time (871 CPU-s)",
    "ctxbandits bench report results/pmlb-refs --no-references --bakeoff-agents RegCB-opt,Oracle-Greedy,Cover-NU,"
    "Bag-greedy,Oracle-epsilon-greedy": "needs the folder above; 44 CPU-s, 43 s of wall time (nine agents)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench regen --suite pmlb-v1 --agents FALCON,RegCB-elim,Bag,Cover,"
    "VW-SquareCB,VW-RegCB-opt,VW-Bag,VW-Cover-NU --work results/pmlb-refs-2 --backend processes --workers 2":
        "needs the PMLB sets, and rewrites the package's references; 660 s of wall time (1,137 CPU-s)",
    "ctxbandits bench report results/pmlb-refs-2 --bakeoff-agents VW-RegCB-opt,VW-Cover-NU,VW-Bag,VW-epsilon,"
    "RegCB-opt,Oracle-Greedy": "needs the folder above; 59 s (17 agents with the references)",
    "ctxbandits bench tune --suite pmlb-v1 --agents LinUCB --budget 8 --out results/pmlb-tune":
        "needs the PMLB sets; a budget-2 study took 114 s on 2 cores (LinUCB 72 and 76 CPU-s a configuration, "
        "Random 10): budget 8 about 600 CPU-s, 10 min of one core",
    # docs/benchmark.md and bench_scorecard.md: the suite's real-data cells need the datasets (CPU seconds: 2 cores shared
    # with ~12 jobs)
    "CTXBANDITS_DATA=~/datasets ctxbandits bench run --agents LinUCB,LinTS --out results/bench":
        "needs the datasets; Random 35, LinUCB 139, LinTS 95 CPU-s (about 22 min of wall time on the loaded cores)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench run --import examples/sw_linucb.py --agents My-SW-LinUCB --out "
    "results/bench": "needs the datasets; SW-LinUCB's suite 778 CPU-s, Random's 35 (about 13.5 min of one core; "
                     "LinUCB's: 139 CPU-s)",
    "ctxbandits bench report --import examples/sw_linucb.py --out results/bench":
        "needs the folder of the two commands above; 8 s of one core (CPU time) with the shipped references as "
        "the zoo",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench run --agents LinUCB --quick --out results/smoke":
        "needs the datasets; 9.7 CPU-s, 43 s on the loaded cores",
    "ctxbandits bench report --out results/smoke": "needs the folder of the command above; 3.3 CPU-s, 13 s",
    "CTXBANDITS_DATA=~/datasets python scripts/bench_coverage.py": "needs the datasets (mushroom); 366 s on 2 shared "
                                                                    "cores (239 CPU-s; --quick in the tests)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench tune --agents LinUCB,epsilon-greedy --budget 6 --out results/tune":
        "needs the datasets; 6 configurations of each agent's suite and Random's once: measured 806 (LinUCB) + 562 "
        "(epsilon-greedy, Random's run included) CPU-s, about 23 min of one core (docs/tuning.md, Tune, play, report)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench run --agents LinUCB,epsilon-greedy --tuned results/tune/tuned.json "
    "--out results/tuned": "needs the datasets and the study above; about 4.5 min of one core (the agents' suites, "
                           "139 + 90 CPU-s at their defaults, and Random's 35)",
    "ctxbandits bench report --out results/tuned": "needs the folder of the command above; about 5 s of one "
                                                   "core (three agents)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench tune --agents ada-OFU-ECOLog --budget 6 --sampler halton --out "
    "results/tune --ship": "needs the datasets, and writes the package's tuned file; 6 configurations of the agent's "
                           "suite and Random's once: about 6 x 184 + 35 = 1,140 CPU-s (its references'), 19 min of "
                           "one core",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench regen --tuned shipped --agents ada-OFU-ECOLog":
        "needs the datasets and the study above, and rewrites the package's tuned-track references; the agent's "
        "suite on the report seeds: about 184 CPU-s, 3 min of one core",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench tune --agents GLM-TSL --budget 6 --sampler halton --track glm --out "
    "results/tune-glm --ship": "needs the datasets, and writes the package's tuned file of the GLM track; 6 "
                               "configurations of the agent's GLM track and Random's once: 3,728 CPU-s measured, 36.5 "
                               "min on 2 shared cores (docs/tuning.md, Tuning on a named track)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench regen --track glm --tuned shipped --agents GLM-TSL":
        "needs the datasets and the study above, and rewrites the package's glm-tuned references; the agent's GLM "
        "track on the report seeds: 507 CPU-s measured (4.7 min with --backend processes --workers 2)",
    "CTXBANDITS_DATA=~/datasets ctxbandits bench run --agents MyAgent --import my_agent.py --track glm --tuned "
    "results/tune-glm/tuned.json --out results/glm-tuned": "needs the datasets, your agent and its study on the GLM "
                                                           "track; a linear agent's GLM track about 2 min of one "
                                                           "core (LinUCB's 74 CPU-s, Random's 34)",
    "python scripts/make_tables.py": "rewrites the docs' tables in the checkout (tests check each is current); "
                                     "20 s on 2 loaded cores",
}

# What makes the commands that do run small: (pattern, replacement, why). Applied in order to every
# command (and to the ```toml files) before it runs.
REWRITES = [
    (r"--seeds \S+", "--seeds 2", "2 seeds show that seeds work"),
    (r"--horizon \d+", "--horizon 50", "a few rounds run every agent's act and observe"),
    (r"^(seeds|horizon) = \S+", lambda m: f"{m[1]} = {2 if m[1] == 'seeds' else 50}", "the same in a config file"),
    (r"--repeat \d+", "--repeat 1", "one timing run"),
    (r"(scripts/bench_agents\.py)", r"\1 --T 100 --N 2", "bench_agents: 100 rounds (one block), 2 instances ..."),
    (r"--T \d+", "--T 100", "... (the command's own --T)"),
    (r"--skip \d+", "--skip 0", "... and no untimed rounds first"),
    (r"--N( \d+)+", "--N 2", "... (the command's own --N)"),
    (r"/tmp/bench\.py 10000 3", "/tmp/bench.py 50 2", "docs/oam.md's benchmark: 50 rounds, 2 seeds"),
    (r"n = 10_000", "n = 200", "docs/oam.md's speed loop: 200 rounds"),
    (r"--sets \d+", "--sets 1", "scripts/vw_head_to_head.py: one PMLB set ..."),
    (r"--cap \d+", "--cap 40", "... of 40 rounds"),
    (r"/tmp/", "{tmp}/", "files go to the test's temp folder"),
]


def key(command: str) -> str:
    """A command as SKIP names it: its words (quotes resolved, comments dropped) joined by spaces."""
    return " ".join(shlex.split(command, comments=True))


def blocks(page: Path) -> list[tuple[int, str, str, str]]:
    """The fenced blocks of a page: (line of the opening fence, tag, body, the prose before it)."""
    found, lines, i, prose = [], page.read_text().splitlines(), 0, []
    while i < len(lines):
        fence = re.match(r"^\s*```(\S*)\s*$", lines[i])
        if not fence:
            prose.append(lines[i])
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        found.append((i + 1, fence[1], "\n".join(lines[i + 1:end]), "\n".join(prose)))
        i, prose = end + 1, []
    return found


def commands(body: str, tag: str) -> list[str]:
    """The commands of a shell block: continuations, open quotes and heredocs joined, `&&` split."""
    lines = body.splitlines()
    if tag == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    out, i = [], 0
    while i < len(lines):
        command = lines[i]
        i += 1
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        while command.endswith("\\") or _open_quote(command):
            if command.endswith("\\"):
                command = command[:-1].rstrip() + " " + lines[i].strip()
            else:
                command += "\n" + lines[i]
            i += 1
        if heredoc := re.search(r"<<-?\s*['\"]?(\w+)['\"]?", command):
            end = next(j for j in range(i, len(lines)) if lines[j].strip() == heredoc[1])
            out.append("\n".join([command, *lines[i:end + 1]]))
            i = end + 1
        else:
            out += [part.strip() for part in command.split(" && ")]
    return out


def _open_quote(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
        return False
    except ValueError:
        return True


def all_blocks():
    return [(page, *block) for page in PAGES for block in blocks(page)]


def where(page: Path, line: int) -> str:
    return f"{page.relative_to(ROOT)}:{line}"


def shell_commands():
    return [(page, line, c) for page, line, tag, body, _ in all_blocks() if tag in SHELL for c in commands(body, tag)]


def test_the_docs_run_this_checkout():
    """The blocks run in this process must use this checkout's packages (PYTHONPATH or `pip install -e .` here)."""
    import agents
    import gym_ctxbandits

    assert Path(gym_ctxbandits.__file__).parents[1] == ROOT and Path(agents.__file__).parents[1] == ROOT, \
        f"the tests import {gym_ctxbandits.__file__}, not this checkout's: set PYTHONPATH={ROOT}"


# --- every block is of a kind this test knows ------------------------------------------------------

def test_every_block_has_a_known_tag():
    bad = [f"{where(page, line)} ```{tag}" for page, line, tag, *_ in all_blocks()
           if tag not in PYTHON | SHELL | FILES | OUTPUT]
    assert not bad, f"tag these blocks with one of {sorted(PYTHON | SHELL | FILES | OUTPUT)}: {bad}"


def test_no_command_hides_in_an_indented_block():
    """Indented code blocks escape this test: a command in one must be fenced instead."""
    bad = []
    for page in PAGES:
        inside = False
        for n, line in enumerate(page.read_text().splitlines(), 1):
            inside ^= line.strip().startswith("```")
            if not inside and re.match(r"^( {4}|\t)\s*(\w+=\S+ )*(python3?|ctxbandits|pip) ", line):
                bad.append(f"{where(page, n)}: {line.strip()}")
    assert not bad, f"fence these commands (```bash): {bad}"


def test_every_skip_entry_is_a_command_of_the_docs():
    names = {key(c) for _, _, c in shell_commands() if not re.search(r"<<", c)}
    stale = sorted(set(SKIP) - names)
    assert not stale, f"SKIP entries that no doc block has any more (remove them): {stale}"
    assert all(re.search(r"\d+(\.\d+)? ?(s|min|h)\b|hours|days|CPU-hours", why) for why in SKIP.values()), \
        "every SKIP entry states how long the command takes"


# --- install commands: checked, not run ------------------------------------------------------------

EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def install_problem(command: str) -> str | None:
    """What is wrong with an install command ('' when it is fine), or None when it is not one."""
    words = shlex.split(command, comments=True)
    if words[:3] in (["python3", "-m", "venv"], ["python", "-m", "venv"]) or words[:1] in (["."], ["source"]):
        return ""
    if words[:2] != ["pip", "install"]:
        return None
    for word in words[2:]:
        name, _, extras = word.partition("[")
        if name.lower().replace("_", "-") == "gym-ctxbandits":
            return f"{word!r} is not published: install from the clone, pip install -e \".[{extras.rstrip(']')}\"\""
        if name in (".", "./") and extras:
            unknown = set(extras.rstrip("]").split(",")) - EXTRAS
            if unknown:
                return f"extras {sorted(unknown)} are not in pyproject.toml's {sorted(EXTRAS)}"
    return ""


def test_install_commands_name_what_exists():
    problems = [f"{where(page, line)}: {c}: {install_problem(c)}" for page, line, c in shell_commands()
                if install_problem(c)]
    inline = [f"{page.relative_to(ROOT)}: {c}" for page in PAGES
              for c in re.findall(r"`(pip install [^`]*)`", page.read_text()) if install_problem(c)]
    assert not problems + inline, problems + inline
    assert install_problem('pip install "gym-ctxbandits[neural]"') and install_problem('pip install -e ".[nope]"')


# --- python blocks ---------------------------------------------------------------------------------

PY_PAGES = sorted({page for page, _, tag, *_ in all_blocks() if tag in PYTHON})


@pytest.mark.parametrize("page", PY_PAGES, ids=lambda p: p.name)
def test_python_blocks_run(page, tmp_path, monkeypatch, capsys):
    import agents

    monkeypatch.chdir(tmp_path)
    registered = dict(agents.REGISTRY)
    # A module of its own, as a reader's file would be (the conformance suite pickles the agents).
    module = types.ModuleType(f"docs_{page.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    try:
        for line, tag, body, _ in blocks(page):
            if tag in PYTHON and not shown_file(body):
                exec(compile(body, f"{where(page, line)}", "exec"), module.__dict__)
    finally:
        agents.REGISTRY.clear()
        agents.REGISTRY.update(registered)
    out = capsys.readouterr().out
    if "PPO" in out:
        assert "PPO plays arm 0" in out


def shown_file(body: str) -> Path | None:
    """The file of examples/ that a block shows (its first line `# examples/NAME.py`), else None."""
    first = body.splitlines()[0] if body else ""
    return ROOT / first[2:] if re.fullmatch(r"# examples/[\w.-]+\.py", first) else None


def test_examples_are_shown_as_they_are_and_run():
    """A block that shows a file of examples/ is that file, byte for byte; every file of examples/ is run
    by a shell block of the docs (`python examples/NAME.py`, run by test_shell_blocks_run)."""
    shown = {}
    for page, line, tag, body, _ in all_blocks():
        if tag in PYTHON and (path := shown_file(body)):
            assert path.exists(), f"{where(page, line)} shows {path.name}, which examples/ does not have"
            assert body == path.read_text().rstrip("\n"), \
                f"{where(page, line)} differs from {path.relative_to(ROOT)}: copy the file into the block"
            shown[path.name] = page
    ran = {c.split()[1] for _, _, c in shell_commands() if re.match(r"python examples/\S+\.py$", c)}
    files = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    assert files and all(f"examples/{f}" in ran for f in files), f"run every example from a doc: {files} vs {ran}"


def test_new_agent_example_is_short():
    """docs/agents.md's worked example of a new algorithm stays under 60 lines (adding an agent is one small module)."""
    example = next(body for _, _, body, _ in blocks(ROOT / "docs" / "agents.md") if "class DiscountedLinUCB" in body)
    assert len(example.strip().splitlines()) < 60


# --- shell blocks ----------------------------------------------------------------------------------

def rewrite(text: str, tmp: Path) -> str:
    for pattern, replacement, _ in REWRITES:
        if isinstance(replacement, str):
            replacement = replacement.replace("{tmp}", str(tmp))
        text = re.sub(pattern, replacement, text, flags=re.M)
    return text


def shims(tmp: Path) -> dict:
    """The environment of a reader's shell in `tmp` whose `ctxbandits` and `python` are this checkout's."""
    bin_dir = tmp / ".bin"
    bin_dir.mkdir()
    for name, target in [("ctxbandits", f'"{sys.executable}" -m gym_ctxbandits.cli'),
                         ("python", f'"{sys.executable}"'), ("python3", f'"{sys.executable}"')]:
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        (bin_dir / name).chmod(0o755)
    (tmp / "scripts").symlink_to(ROOT / "scripts")
    (tmp / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return env


@functools.lru_cache
def ray_usage(sub: tuple[str, ...]) -> str:
    """`ray SUB --help` (a second or so each: asked once per subcommand)."""
    return subprocess.run([str(Path(sys.executable).parent / "ray"), *sub, "--help"], capture_output=True, text=True,
                          timeout=120).stdout


@functools.lru_cache
def script_usage(script: Path) -> str:
    """`python SCRIPT --help` (a second or two each: asked once per script)."""
    return subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60).stdout


def check_ray_command(words: list[str], tmp: Path, monkeypatch, capsys) -> None:
    """Ray's own CLI (`ray start`, `ray job submit`, ...): its options must be those of `ray SUB
    --help`; the command after `--` (a job's entrypoint) is checked as the driver's command, whose
    `--out` is on the cluster, not here."""
    ray_words = words[: words.index("--")] if "--" in words else words
    entrypoint = words[words.index("--") + 1:] if "--" in words else []
    sub = tuple(itertools.takewhile(lambda w: not w.startswith("-"), ray_words[1:]))
    usage = ray_usage(sub)
    assert usage, f"{' '.join(words)}: `ray {' '.join(sub)} --help` printed nothing (is ray[default] installed?)"
    unknown = [w for w in ray_words if w.startswith("--") and w.split("=")[0] not in usage]
    assert not unknown, f"{' '.join(words)}: ray {' '.join(sub)} has no options {unknown}"
    if entrypoint:
        check_skipped(shlex.join(entrypoint), tmp, monkeypatch, capsys, on_cluster=True)


def check_skipped(command: str, tmp: Path, monkeypatch, capsys, on_cluster: bool = False) -> None:
    """The arguments of a command that is not run: a paper script's --dry-run, ctxbandits' own checks,
    Ray's CLI options, another script's --help. `on_cluster`: the command runs on a Ray cluster's
    head (a job's entrypoint), so its `--out` is not checked here."""
    words = shlex.split(command, comments=True)
    with monkeypatch.context() as m:
        while words and re.match(r"^\w+=", words[0]):
            name, _, value = words.pop(0).partition("=")
            m.setenv(name, os.path.expanduser(value))
        m.chdir(tmp)
        if words[:1] == ["ray"]:
            check_ray_command(words, tmp, monkeypatch, capsys)
        elif words[:1] == ["ctxbandits"]:
            from gym_ctxbandits import cli
            from gym_ctxbandits.compare import check_comparison

            args = cli.build_parser().parse_args(words[1:])
            if args.command == "run":
                comp = cli.comparison_from_args(args)
                check_comparison(comp.envs, comp.agents, comp.seeds, comp.workers, None if on_cluster else comp.out,
                                 comp.device, comp.backend)
        elif words[:2] == ["python", "-m"]:
            assert words[2] == "pytest", command
        elif words[:1] == ["python"] and words[1].startswith("scripts/") and (ROOT / words[1]).exists() \
                and "from _paper import" in (ROOT / words[1]).read_text():
            m.syspath_prepend(str(ROOT / "scripts"))
            m.setattr(sys, "argv", [str(ROOT / words[1]), *words[2:], "--dry-run", "--quiet"])
            with pytest.raises(SystemExit) as stop:
                runpy.run_path(str(ROOT / words[1]), run_name="__main__")
            assert stop.value.code == 0, f"{command}: --dry-run failed: {capsys.readouterr().err[-2000:]}"
        else:
            script = ROOT / words[1]
            assert words[0] == "python" and script.exists(), f"{command}: no script {words[1]}"
            usage = script_usage(script)
            unknown = [w for w in words[2:] if w.startswith("--") and w.split("=")[0] not in usage]
            assert not unknown, f"{command}: {script.name} has no options {unknown}"


def ctxbandits_argv(run: str) -> list[str] | None:
    """The arguments of `run` when it is a plain `ctxbandits ...` command: words and quotes only (no
    pipe, redirection, variable, glob, comment or environment assignment) and no `--import` (a user
    module registers agents and envs for good); else None."""
    bare = re.sub(r"'[^']*'|\"[^\"$`\\]*\"", "", run)        # the quoted parts are plain words
    if re.search(r"[|&;<>()$`*?~\[\]{}\\#!\n]", bare):
        return None
    words = shlex.split(run)
    return words[1:] if words[0] == "ctxbandits" and "--import" not in words else None


def run_ctxbandits(argv: list[str], tmp: Path, env: dict, monkeypatch, capsys) -> tuple[int, str]:
    """`ctxbandits ARGV` in `tmp`, in this process (gym_ctxbandits.cli.main, as the entry point calls it)
    with the shell's environment: a fresh interpreter would cost 1-2 s of imports a command. The
    entry point itself runs as a command in extending.md's blocks (`--import`) and tests/test_cli.py.
    Its exit code and stderr."""
    from gym_ctxbandits import cli

    capsys.readouterr()
    with monkeypatch.context() as m:
        m.chdir(tmp)
        m.setattr(sys, "path", sys.path[:])            # as it was after the command
        for name in ("PATH", "PYTHONPATH", "MPLBACKEND"):
            m.setenv(name, env[name])
        try:
            code = cli.main(argv)
        except SystemExit as stop:
            code = stop.code
    return code, capsys.readouterr().err


SHELL_PAGES = sorted({page for page, _, tag, *_ in all_blocks() if tag in SHELL})


@pytest.mark.parametrize("page", SHELL_PAGES, ids=lambda p: p.name)
def test_shell_blocks_run(page, tmp_path, monkeypatch, capsys):
    env = shims(tmp_path)
    for _, tag, body, prose in blocks(page):          # the files the commands read
        if tag in FILES:
            names = re.findall(r"`([\w.-]+\.(?:toml|ya?ml))`", prose)
            assert names, f"{page.name}: say which file the ```{tag} block is (`name.{tag}`) just before it"
            (tmp_path / names[-1]).write_text(rewrite(body, tmp_path) + "\n")
    for line, tag, body, _ in blocks(page):
        if tag not in SHELL:
            continue
        for command in commands(body, tag):
            problem = install_problem(command)
            if problem is not None:
                assert not problem, f"{where(page, line)}: {command}: {problem}"
                continue
            if "<<" not in command and key(command) in SKIP:
                check_skipped(command, tmp_path, monkeypatch, capsys)
                continue
            run = rewrite(command, tmp_path)
            if (argv := ctxbandits_argv(run)) is not None:
                code, err = run_ctxbandits(argv, tmp_path, env, monkeypatch, capsys)
            else:
                proc = subprocess.run(["bash", "-euo", "pipefail", "-c", run], cwd=tmp_path, env=env,
                                      capture_output=True, text=True, timeout=300)
                code, err = proc.returncode, proc.stderr
            assert code == 0, (
                f"{where(page, line)}: the command\n{command}\nrun as\n{run}\nfailed ({code}):\n"
                f"{err[-3000:]}\nFix the doc or the code; or, when it cannot run at a small size or needs "
                "the datasets, add it to SKIP in tests/test_docs_blocks.py with the reason and its run time")


# --- tables that mirror a registry -----------------------------------------------------------------

def test_readme_environment_table_is_the_registry():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        make_tables = runpy.run_path(str(ROOT / "scripts" / "make_tables.py"))
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    text = (ROOT / "README.md").read_text()
    assert make_tables["rewritten"](text) == text, \
        "README.md's environment table is not the registry's: run `python scripts/make_tables.py`"
    import gymnasium as gym

    table = text.partition(make_tables["BEGIN"])[2].partition(make_tables["END"])[0]
    assert set(re.findall(r"`(CtxBandit/[\w-]+)`", table)) == {i for i in gym.registry if i.startswith("CtxBandit/")}


def agent_tables() -> dict[str, list[str]]:
    """Agent name -> the pages whose `| name | ...` tables have a row for it (tables of agents only)."""
    import agents

    rows: dict[str, list[str]] = {}
    for page in PAGES:
        table: list[str] = []
        for line in [*page.read_text().splitlines(), ""]:
            if line.startswith("| name |"):
                table = ["header"]
            elif table and line.startswith("|"):
                if cell := re.match(r"\| `([^`]+)` \|", line):
                    table.append(cell[1])
            elif table:
                names = table[1:]
                if any(n in agents.REGISTRY for n in names):   # a table of agents (not e.g. of datasets)
                    for n in names:
                        rows.setdefault(n, []).append(page.name)
                table = []
    return rows


def test_agent_tables_mirror_the_registry():
    """Every registered agent has a row in exactly one agents table of the docs, and every row names one."""
    import agents

    rows = agent_tables()
    missing = sorted(set(agents.REGISTRY) - set(rows))
    unknown = sorted(set(rows) - set(agents.REGISTRY))
    twice = {n: pages for n, pages in rows.items() if len(pages) > 1}
    assert not (missing or unknown or twice), (
        f"registered agents without a row in a `| name |` table of docs/*.md: {missing}; rows naming no "
        f"registered agent: {unknown}; agents with rows in two tables: {twice}")


def documented_defaults() -> list[tuple[str, str, str, str]]:
    """(page, agent, keyword, documented value) for the first `key=value` of each keyword in the
    defaults cell of every agents table (`| name | ... | defaults |`)."""
    found = []
    for page in PAGES:
        column = None
        for line in page.read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| name |"):
                column = cells.index("defaults") if "defaults" in cells else None
            elif column is not None and line.startswith("|") and (name := re.match(r"`([^`]+)`$", cells[0])):
                seen = set()
                for key, value in re.findall(r"`(\w+)=([^`,]+)`", cells[column] if column < len(cells) else ""):
                    if key not in seen:
                        seen.add(key)
                        found.append((page.name, name[1], key, value))
            elif not line.startswith("|"):
                column = None
    return found


def test_documented_defaults_are_the_constructors():
    """A default written in an agents table is the constructor's (the docs cannot drift from the code)."""
    import ast
    import inspect

    import agents

    wrong, checked = [], 0
    for page, name, key, value in documented_defaults():
        if name not in agents.REGISTRY:
            continue
        factory = agents.REGISTRY[name]
        factory = factory.cls() if hasattr(factory, "cls") else factory      # a lazy torch agent
        parameter = inspect.signature(factory).parameters.get(key)
        try:
            documented = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            continue                                   # a symbol (`horizon=n`), not a literal
        if parameter is None or parameter.default is inspect.Parameter.empty:
            continue                                   # a paper setting the agent fixes, not a keyword
        checked += 1
        if parameter.default != documented:
            wrong.append(f"{page}: {name} {key}={value}, but the constructor's default is {parameter.default!r}")
    assert checked >= 20 and not wrong, wrong
