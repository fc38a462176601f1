"""gym_ctxbandits.slate_obd: OBD's rows grouped into slates, the random policy's exact slate propensities,
the refusal of incomplete slates with its counts, the target shares, the truth and row IIPS, on tiny logs
written here (the fixtures of data/fixtures/home/obd are a cut of the obp sample: no complete slate), and
the counts of the real sample where $CTXBANDITS_DATA holds it."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits import datasets, slate_obd, slate_ope
from gym_ctxbandits.datasets import DatasetNotFound

L = 4  # items of the tiny logs
T0 = pd.Timestamp("2019-11-24 00:00:00", tz="UTC")


def rows(user: str, seconds, items, positions, clicks=None, pscore=1 / L) -> list[dict]:
    """Rows of one user at T0 + seconds."""
    clicks = [0] * len(items) if clicks is None else clicks
    return [{"timestamp": str(T0 + pd.Timedelta(seconds=s)), "item_id": e, "position": k, "click": c,
             "propensity_score": pscore, "user_feature_0": user, "user_feature_1": "x",
             **{f"user-item_affinity_{i}": float(ord(user[0]) % 3 + i) for i in range(L)}}
            for s, e, k, c in zip(seconds, items, positions, clicks)]


def tiny_log() -> pd.DataFrame:
    """Two complete slates at the same instant (users u and v, rows out of position order), a partial pair,
    a lone row just outside the window, four rows of one user inside the window (ambiguous) and a slate
    with a repeated item; time-sorted as OBD's rows are."""
    table = [*rows("u", [0.0, 0.001, 0.002], [2, 0, 1], [3, 1, 2], clicks=[1, 0, 1]),
             *rows("v", [0.0, 0.0015, 0.003], [3, 1, 0], [1, 2, 3], clicks=[0, 1, 0]),
             *rows("u", [0.5], [3], [1]),                                   # 0.498 s after u's slate: another impression
             *rows("u", [10.0, 10.01], [1, 3], [1, 2]),                     # a pair, position 3 not logged
             *rows("w", [20.0, 20.01, 20.02, 20.03], [0, 1, 2, 3], [1, 2, 3, 1]),
             *rows("y", [30.0, 30.01, 30.02], [0, 0, 1], [1, 2, 3])]
    return pd.DataFrame(table).sort_values("timestamp", kind="stable").reset_index(drop=True)


def write(folder: Path, events: pd.DataFrame, behavior: str = "random") -> Path:
    """events as OBD's files under folder/obd/<behavior>/all, for datasets.load_open_bandit(path=folder)."""
    where = folder / "obd" / behavior / "all"
    where.mkdir(parents=True, exist_ok=True)
    events.to_csv(where / "all.csv")
    pd.DataFrame({"item_id": range(L), "item_feature_0": np.linspace(0, 1, L)}).to_csv(where / "item_context.csv")
    return folder


def test_group_links_one_users_rows_within_the_window_and_counts_the_rest():
    events = tiny_log()
    slates, counts = slate_obd.group(events)
    assert counts == {"rows": 16, "slates": 2, "rows in slates": 6, "partial": 3, "partial pairs": 1,
                      "ambiguous": 4, "repeated item": 3}
    assert events["item_id"].to_numpy()[slates].tolist() == [[0, 1, 2], [3, 1, 0]]   # position 1 first
    assert (events["position"].to_numpy()[slates] == [1, 2, 3]).all()
    assert events["user_feature_0"].to_numpy()[slates].tolist() == [["u"] * 3, ["v"] * 3]
    # a window of 1 s joins u's lone row to its slate: four rows, a position twice, ambiguous
    wide = slate_obd.group(events, window=1.0)[1]
    assert (wide["slates"], wide["ambiguous"], wide["partial"]) == (1, 8, 2)
    with pytest.raises(ValueError, match="position must be 1..3"):
        slate_obd.group(events.assign(position=events["position"] - 1))
    with pytest.raises(ValueError, match="window must be a non-negative"):
        slate_obd.group(events, window=-1)


def test_random_propensities_are_the_closed_forms():
    p = slate_obd.random_propensities(2, 4)
    np.testing.assert_allclose(p["pscore"], [1 / 24, 1 / 24])                        # 1 / (4 * 3 * 2)
    np.testing.assert_allclose(p["pscore_cascade"], [[1 / 4, 1 / 12, 1 / 24]] * 2)    # 1/4, 1/(4*3), 1/(4*3*2)
    np.testing.assert_allclose(p["pscore_item_position"], np.full((2, 3), 1 / 4))
    assert slate_obd.random_propensities(1, 80)["pscore"][0] == pytest.approx(1 / 492_960)   # 80 * 79 * 78
    # a uniform Plackett-Luce is the uniform draw without replacement: slate_ope's enumeration agrees
    action = np.array([[0, 1, 2], [3, 1, 0]])
    exact = slate_ope.propensities(slate_ope.PlackettLuce(np.zeros(1), 3), np.ones((2, L, 1)), action)
    for key in ("pscore", "pscore_cascade", "pscore_item_position"):
        np.testing.assert_allclose(slate_obd.random_propensities(2, L)[key], exact[key])
    with pytest.raises(ValueError, match="num_items must be an integer of at least 3"):
        slate_obd.random_propensities(1, 2)


def test_slate_log_through_the_loader_keeps_complete_slates_and_counts_the_dropped(tmp_path):
    log = slate_obd.slate_log("random", path=write(tmp_path, tiny_log()), check_size=False)
    assert log["n_rounds"] == 2 and log["num_items"] == L and log["num_positions"] == 3
    assert log["action"].tolist() == [[0, 1, 2], [3, 1, 0]] and log["clicks"].tolist() == [[0, 1, 1], [0, 1, 0]]
    assert log["dropped"]["partial"] == 3 and log["dropped"]["ambiguous"] == 4 and log["dropped"]["repeated item"] == 3
    np.testing.assert_allclose(log["pscore"], 1 / 24)
    assert log["context"].shape == (2, 2) and log["affinity"].shape == (2, L)
    # target = behaviour: every weight is 1 and each estimator is the mean clicks of a slate, (2 + 1) / 2
    log.update({f"target_{k}": log[k] for k in ("pscore", "pscore_cascade", "pscore_item_position")})
    assert [e.value for e in slate_ope.evaluate(log, ["SIPS", "IIPS", "RIPS"], n_bootstrap=20)] == [1.5] * 3


def test_slate_log_refuses_what_is_not_a_random_slate_log(tmp_path):
    events = tiny_log()
    with pytest.raises(ValueError, match=r"no complete slate in the random log of all \(3 rows, 0 slates; dropped 3 "
                                         r"partial \(1 pairs\), 0 ambiguous, 0 with a repeated item\).*full Open"):
        slate_obd.slate_log(events=events[events["user_feature_0"] == "u"].iloc[3:].reset_index(drop=True),
                            num_items=L)
    with pytest.raises(ValueError, match="propensity_score is not 1/L = 1/4 in 2 slates"):
        slate_obd.slate_log(events=events.assign(propensity_score=0.3), num_items=L)
    with pytest.raises(ValueError, match="give num_items"):
        slate_obd.slate_log(events=events)
    bts = slate_obd.slate_log("bts", path=write(tmp_path, events.assign(propensity_score=0.3), "bts"), check_size=False)
    assert bts["pscore"] is None and bts["pscore_cascade"] is None
    np.testing.assert_allclose(bts["pscore_item_position"], 0.3)                    # the logged marginals
    assert "IIPS only" in bts["meta"]["propensities"]


def test_shares_truth_and_row_iips_by_hand():
    target = tiny_log()                      # its complete slates: (0, 1, 2) and (3, 1, 0)
    action = np.array([[0, 1, 2], [3, 2, 1], [1, 0, 3]])
    got = slate_obd.shares(target, action, L)
    # 7 of the 16 rows are at position 1: items 0, 3, 3, 1, 0, 3, 0
    at = slate_obd.item_shares(target, L)
    first = target.loc[target["position"] == 1, "item_id"].to_numpy()
    np.testing.assert_allclose(at[:, 0], np.bincount(first, minlength=L) / len(first))
    np.testing.assert_allclose(got["target_pscore_item_position"], at[action, np.arange(3)])
    np.testing.assert_allclose(got["target_pscore"], [0.5, 0, 0])                   # one slate of the two is (0, 1, 2)
    np.testing.assert_allclose(got["target_pscore_cascade"], [[0.5, 0.5, 0.5], [0.5, 0, 0], [0, 0, 0]])
    value, low, high = slate_obd.truth(target)
    click, position = target["click"].to_numpy(), target["position"].to_numpy()
    assert value == pytest.approx(sum(click[position == k].mean() for k in (1, 2, 3))) and low < value < high
    # behaviour = target: row IIPS is the truth's sum of per-position means
    pi = target["propensity_score"].to_numpy()
    assert slate_obd.row_iips(target, pi, n_bootstrap=20).value == pytest.approx(value)
    with pytest.raises(ValueError, match="target_marginal must hold"):
        slate_obd.row_iips(target, pi[:3])


REAL = os.environ.get("CTXBANDITS_DATA") or None


def test_the_obp_sample_holds_no_complete_slate():
    try:
        logs = {b: datasets.load_open_bandit(behavior=b, data_home=REAL) for b in ("random", "bts")}
    except DatasetNotFound:
        pytest.skip("the Open Bandit sample (obd/random/all, obd/bts/all) is not in the data home "
                    f"{REAL or '(CTXBANDITS_DATA unset)'}")
    counts = {b: slate_obd.group(d.events)[1] for b, d in logs.items()}
    assert counts["random"]["slates"] == counts["bts"]["slates"] == 0
    assert (counts["random"]["partial pairs"], counts["bts"]["partial pairs"]) == (113, 20)
    with pytest.raises(ValueError, match="no complete slate in the random log of all"):
        slate_obd.slate_log("random", events=logs["random"].events, num_items=80)


def test_script_runs_the_slate_estimators_where_both_logs_hold_slates(tmp_path, capsys):
    """scripts/slate_obd.py on tiny logs in OBD's files: both logs' complete slates are (0, 1, 2) and
    (3, 1, 0), so BTS's list share of each is 1/2 and SIPS's weight 1/2 x 24 = 12: SIPS = 12 x (2 + 1) / 2."""
    main = runpy.run_path(str(Path(__file__).resolve().parents[1] / "scripts" / "slate_obd.py"))["main"]
    write(tmp_path, tiny_log())
    write(tmp_path, tiny_log().assign(propensity_score=0.3), "bts")
    assert main(["--path", str(tmp_path), "--n-bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert "| random | 16 | 2 | 6 (37.5%) | 3 (1) | 4 | 3 |" in out
    assert "| BTS shares | rows | IIPS (rows) |" in out and "| 2 slates | IIPS |" in out and "| 2 slates | RIPS |" in out
    assert "| BTS shares | 2 slates | SIPS | 18.0000 |" in out and "give the full dataset" not in out
    with pytest.raises(SystemExit) as stop:                          # no logs there: the loader's one-line error
        main(["--path", str(tmp_path / "nowhere")])
    assert stop.value.code == 2 and "error: DatasetNotFound" in capsys.readouterr().err
