"""scripts/ope_coverage.py and scripts/ope_obd.py: their parts against known answers, and small runs.

The OBD benchmark runs on an Open Bandit log in the dataset's own format written here, with
known click rates: Random and a "BTS" that favours the better items each log 20,000 events."""

import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import agents
from gym_ctxbandits import feedback

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import ope_coverage  # noqa: E402
import ope_obd  # noqa: E402


def test_coverage_quick_run_prints_every_row(capsys):
    """Every env; MNIST where the data home holds it (it is a real dataset: no fixture stands in);
    Digits (sklearn ships it) with its own two behaviours, epsilon-greedy 0.4 and uniform."""
    mnist = (Path(os.environ.get("CTXBANDITS_DATA") or "/nonexistent") / "mnist").is_dir()
    envs = list(ope_coverage.ENVS) if mnist else ["Linear", "Logistic", "Quadratic", "Digits"]
    assert ope_coverage.main(["--quick", "--envs", ",".join(envs)]) == 0
    out = capsys.readouterr().out
    overlap, true, wrong = (part.splitlines()[2:] for part in out.split("\n\n")[:3])
    settings = 3 * (2 * 3 + mnist) + 2      # behaviours x targets (LinUCB, LinTS on 3 synthetic envs; MNIST, Digits LinUCB)
    assert len(overlap) == settings
    assert len(true) == settings * 10                 # ... x estimators (7, DR in-sample, Switch-DR and DRos at 20, 400)
    assert len(wrong) == 2 * 3 * 2 * 2                # Linear, Logistic x behaviours x targets x the two wrong pscores
    assert all(row.count("%") == 1 for row in true) and all(row.count("%") == 3 for row in wrong)
    assert "| Linear | softmax 0.1 |" in out and "| Logistic | softmax 0.5 |" in out
    assert "| Quadratic | softmax 0.1 floor 0.05 | LinTS | Switch-DR |" in out
    assert "| Digits | eps-greedy 0.4 | LinUCB | Switch-DR tau=20 |" in out and "| Digits | uniform | LinUCB | DRos |" in out
    tuned = [row.split(" | ")[-1].strip(" |") for row in true if "| Switch-DR |" in row or "| DRos |" in row]
    assert len(tuned) == 2 * settings and all(re.fullmatch(r"\S+, [0-2] of 2", cell) for cell in tuned), tuned
    assert all(row.endswith("|  |") for row in true if "| Switch-DR |" not in row and "| DRos |" not in row)
    assert not mnist or ("| MNIST | eps-greedy 0.1 | LinUCB | DRos |" in out
                         and "| MNIST | eps-greedy 0.1 | LinUCB | DR in-sample |" in out)
    assert "nan" not in out


def test_tau_grid_marks_the_smallest_tau_within_the_weight_cap():
    text = ope_coverage.tau_grid(ope_coverage.Args(2, 100, 50, 20), (0.01, 0.3, 100.0))
    rows = [row.strip("| ").split(" | ") for row in text.splitlines()[2:]]
    for env in ope_coverage.TAUS:                     # the envs whose softmax tau the rule picks
        heavy = {}
        for row in (r for r in rows if r[0] == env):
            heavy.setdefault(float(row[1].removesuffix(" <-")), []).append(float(row[4]))   # max weight per target
        marked = {float(r[1].removesuffix(" <-")) for r in rows if r[0] == env and r[1].endswith("<-")}
        within = [tau for tau, w in heavy.items() if np.mean(w) <= ope_coverage.MAX_WEIGHT]
        assert len(heavy) == 3 and marked == {min(within)}, (env, heavy, marked)
        assert max(heavy[100.0]) < 11                 # tau = 100 is nearly uniform: weights pi / b of about 1 / 0.1 at most


def test_lints_copies_sample_the_trained_posterior():
    """The vectorised copies' action distribution is LinTS's own action_probs, within Monte-Carlo error."""
    env = "CtxBandit/Linear-v0"
    copies = ope_coverage.train_copies(env, rounds=50, seed=3, copies=2000)
    assert np.allclose(copies.theta_, copies.theta_[0])         # one posterior
    log = feedback.log(env, agents.make("Random", seed=0), 200, seed=9, env_kwargs=ope_coverage.KW)
    single = agents.make("LinTS", seed=3)
    for x, a, r in zip(log["context"], log["action"], log["reward"]):   # the same data for both
        single.observe(x, a, r)
        copies.observe(np.broadcast_to(x, (2000, *x.shape)), np.full(2000, a), np.full(2000, r))
    context = log["context"][-3:]
    fast = ope_coverage.sampled_dist(copies, context, 2000)
    slow = feedback.target_probs(single, {"context": context}, draws=1000)
    assert np.abs(fast - slow).max() < 0.08                       # 4 sd of a difference of 2000- and 1000-draw shares
    assert np.allclose(fast.sum(axis=1), 1.0)


def test_prior_simulation_ranks_by_the_beta_samples(tmp_path):
    # Beta(1000, 1) ~ 1, Beta(500, 500) ~ 0.5, Beta(1, 1000) ~ 0: the ranking is items 0, 2, 1 almost surely
    (tmp_path / "prior.yaml").write_text("all:\n  alpha: [1000, 1, 500]\n  beta: [1, 1000, 500]\n")
    dist = ope_obd.prior_dist(str(tmp_path / "prior.yaml"), "all", 2000, seed=0)
    assert np.allclose(dist, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])


def write_obd(root: Path, behavior: str, probs: np.ndarray, ctr: np.ndarray, n: int, seed: int) -> None:
    """An Open Bandit log in the dataset's layout: items drawn from `probs`, clicks Bernoulli(ctr[item])."""
    rng = np.random.default_rng(seed)
    K = len(ctr)
    folder = root / "obd" / behavior / "all"
    folder.mkdir(parents=True)
    pd.DataFrame({"item_id": range(K), "item_feature_0": np.linspace(-1, 1, K),
                  "item_feature_1": [f"c{k % 3}" for k in range(K)]}).to_csv(folder / "item_context.csv")
    item = rng.choice(K, size=n, p=probs)
    pd.DataFrame({"timestamp": ["t"] * n, "item_id": item, "position": rng.integers(1, 4, size=n),
                  "click": (rng.random(n) < ctr[item]).astype(int), "propensity_score": probs[item],
                  **{f"user_feature_{j}": rng.choice(["a", "b", "c"], size=n) for j in range(4)},
                  **{f"user-item_affinity_{k}": rng.integers(0, 3, size=n).astype(float) for k in range(K)},
                  }).to_csv(folder / "all.csv")


def test_obd_benchmark_recovers_the_target_ctr(tmp_path, capsys):
    K, n = 10, 20_000
    ctr = 0.01 * (1 + np.arange(K))                                 # item k clicks at (k + 1)%
    favour = np.exp(np.arange(K) / 2) / np.exp(np.arange(K) / 2).sum()
    write_obd(tmp_path, "random", np.full(K, 1 / K), ctr, n, seed=0)
    write_obd(tmp_path, "bts", favour, ctr, n, seed=1)
    assert ope_obd.main(["--path", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    truth = float(out.split("on-policy CTR ")[1].split()[0])
    assert truth == pytest.approx((favour * ctr).sum(), abs=0.005)   # 0.087; Random's CTR is 0.055
    errors = {line.split("|")[2].strip().split(" (")[0]: float(line.split("|")[5])
              for line in out.splitlines() if line.startswith("| BTS log |")}
    assert set(errors) == {"IPS", "SNIPS", "DM", "DR", "SNDR", "Switch-DR", "DRos", "Replay"}
    for name in ("IPS", "SNIPS", "DR", "SNDR", "Switch-DR", "DRos", "Replay"):
        assert errors[name] < 0.2, (name, errors)                     # Random's own CTR would be off by 0.37
    kept = int(out.split("Replay (")[1].split()[0])
    assert abs(kept - n / K) < 200
