"""Logged bandit feedback: run a behaviour agent on an env and record what off-policy evaluation needs.

`log(env_id, agent, n_rounds, seed, out=...)` plays the agent for n_rounds rounds and returns (and
writes to Parquet, one row per round) the feedback dict:

    n_rounds, n_actions      ints
    round        (n,)        1-based round, as in the results tables
    context      (n, K, d)   the per-arm features the agent saw (the observation)
    action       (n,)        the arm it pulled
    reward       (n,)        the reward it got
    pscore       (n,)        its probability of that arm, action_prob[i, action[i]]
    action_prob  (n, K)      its whole distribution over the arms (agent.action_probs)
    expected_reward (n, K)   every arm's expected reward of the round where the env knows it
                             (synthetic envs; None otherwise): ground truth for the logger only,
                             the agent never sees it
    position     (n,)        the 0-based slot of a ranking log (the Open Bandit Dataset's 3 slots;
                             None for single-slot logs)
    meta         dict        env, env_kwargs, agent, seed (or dataset, behavior, campaign)

`to_obp` / `from_obp` convert to and from the Open Bandit Pipeline's `bandit_feedback` dict;
`from_obd` gives the Open Bandit Dataset's logs in this layout; `true_value` is the exact value
of a target policy on the logged rounds, to check estimators.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from gym_ctxbandits.jobs import AgentSpec, env_creator, import_agents, is_replay, kind

META_KEY = b"gym_ctxbandits.feedback"
ARRAYS = ("round", "context", "action", "reward", "pscore", "action_prob", "expected_reward", "position")


def log(env_id: str, agent, n_rounds: int, seed: int, *, out: str | os.PathLike | None = None,
        env_kwargs: dict | None = None, draws: int | None = None, progress: bool = True) -> dict:
    """Play `agent` (an agent object, or a registered name built with the seed the run loop would
    give it) for `n_rounds` rounds of `env_id` from `reset(seed=seed)` and record the feedback dict
    (module docstring); write it to the Parquet file `out` if given. Each round asks the agent for
    `action_probs(obs)` (with `draws` Monte-Carlo copies where it samples) before it acts: that
    changes none of its choices, so the log is the run the agent makes anyway. An agent without a
    closed-form `_probs` has its propensities estimated by playing `draws` copies of it every round
    (docs/extending.md, "Propensities"): with `progress`, when that would take over PROGRESS_AFTER
    seconds, the cost measured on the first round is printed to stderr and then the progress."""
    env_kwargs = dict(env_kwargs or {})
    if out is not None and not Path(out).parent.is_dir():
        raise ValueError(f"cannot write {out}: its folder {Path(out).parent} does not exist (create it first)")
    if is_replay(env_id):
        raise ValueError(f"{env_id} replays logged data already; log a behaviour agent on a simulated env instead")
    if kind(env_creator(env_id)) == "ranking" or kind(agent if not isinstance(agent, str) else
                                                      import_agents().REGISTRY.get(agent)) == "ranking":
        raise ValueError(f"this log is of one arm a round; {env_id} or its agent ranks items: log a ranking with "
                         "gym_ctxbandits.slate_ope.log (docs/slate_ope.md)")
    if isinstance(agent, str):
        name, agent = agent, AgentSpec(agent).build(seed)
    else:
        name = type(agent).__name__
    env = gym.make(env_id, max_episode_steps=n_rounds, **env_kwargs)
    obs, _ = env.reset(seed=seed)
    truth = env.unwrapped if hasattr(env.unwrapped, "expected_rewards") else None
    rows = {key: [] for key in ("context", "action", "reward", "action_prob", "expected_reward")}
    report = _Progress(name, n_rounds, draws, progress)
    for t in range(n_rounds):
        start = time.perf_counter()
        probs = np.asarray(agent.action_probs(obs) if draws is None else agent.action_probs(obs, draws=draws))
        report(t, time.perf_counter() - start, agent, obs)
        action = int(agent.act(obs))
        if probs[action] <= 0:
            raise ValueError(f"round {t + 1}: {name} pulled arm {action}, whose estimated probability is 0; raise "
                             "draws (Monte-Carlo copies behind action_probs) so that every arm it may pull is seen")
        if truth is not None:
            rows["expected_reward"].append(truth.expected_rewards)
        next_obs, reward, _, _, _ = env.step(action)
        agent.observe(obs, action, reward)
        for key, value in zip(("context", "action", "reward", "action_prob"), (obs, action, reward, probs)):
            rows[key].append(value)
        obs = next_obs
    env.close()
    action = np.array(rows["action"], dtype=np.int64)
    action_prob = np.array(rows["action_prob"], dtype=float)
    feedback = {
        "n_rounds": n_rounds, "n_actions": action_prob.shape[1], "round": np.arange(1, n_rounds + 1),
        "context": np.array(rows["context"]), "action": action, "reward": np.array(rows["reward"], dtype=float),
        "pscore": action_prob[np.arange(n_rounds), action], "action_prob": action_prob,
        "expected_reward": np.array(rows["expected_reward"]) if truth is not None else None, "position": None,
        "meta": {"env": env_id, "env_kwargs": env_kwargs, "agent": name, "seed": seed},
    }
    if out is not None:
        write(feedback, out)
    return feedback


PROGRESS_AFTER = 10.0         # seconds of estimated propensity sampling after which `log` reports its progress


class _Progress:
    """`log`'s report on the propensities' cost: on round 2, if the agent's propensities are
    sampled (no closed-form `_probs`) and all rounds would take over PROGRESS_AFTER seconds, one
    line with the cost and the fix, then a line at every tenth of the rounds."""

    def __init__(self, name: str, n_rounds: int, draws: int | None, enabled: bool):
        self.name, self.n, self.draws, self.enabled, self.spent, self.every = name, n_rounds, draws, enabled, 0.0, 0

    def __call__(self, t: int, seconds: float, agent, obs) -> None:
        if not self.enabled:
            return
        self.spent += seconds
        if t == 1:                      # the agent has started (its first obs fixed its shape): ask its _probs
            probs = getattr(agent, "_probs", None)
            sampled = probs is not None and hasattr(agent, "_check_obs") and probs(agent._check_obs(obs)) is None
            if sampled and seconds * self.n > PROGRESS_AFTER:
                draws = self.draws or getattr(agent, "probs_draws", "the default")
                print(f"log: {self.name} has no closed-form _probs, so its propensities are estimated by playing "
                      f"{draws} copies of it every round: {seconds:.2g} s on round 2, about {seconds * self.n:.0f} s "
                      f"for {self.n} rounds (fewer draws, --draws, is faster and noisier; an exact _probs makes it "
                      "instant: "
                      "docs/extending.md, \"Propensities\")", file=sys.stderr, flush=True)
                self.every = max(1, self.n // 10)
        elif self.every and (t + 1) % self.every == 0:
            print(f"log: {t + 1}/{self.n} rounds, {self.spent:.0f} s estimating propensities, about "
                  f"{self.spent / (t + 1) * (self.n - t - 1):.0f} s left", file=sys.stderr, flush=True)


def write(feedback: dict, path: str | os.PathLike) -> None:
    """The feedback dict as a Parquet file, one row per round (nested fixed-size lists for the
    per-arm arrays), written to a temporary file first so a crash never leaves a partial one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {}
    for key in ARRAYS:
        value = feedback.get(key)
        if value is not None:
            columns[key] = _nested(pa, np.asarray(value))
    meta = dict(feedback.get("meta", {}), n_rounds=int(feedback["n_rounds"]), n_actions=int(feedback["n_actions"]))
    table = pa.table(columns).replace_schema_metadata({META_KEY: json.dumps(meta, default=str).encode()})
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read(path: str | os.PathLike) -> dict:
    """The feedback dict of a file written by `log` / `write`."""
    import pyarrow.parquet as pq

    if not os.path.exists(path):
        raise FileNotFoundError(f"no log file {path}: make one with `ctxbandits log --env ENV --agent AGENT --rounds N "
                                f"--out {path}` (or gym_ctxbandits.log(..., out=...))")
    table = pq.read_table(path)
    meta = json.loads((table.schema.metadata or {}).get(META_KEY, b"{}"))
    if "n_actions" not in meta:
        raise ValueError(f"{path} is not logged bandit feedback of gym_ctxbandits (no {META_KEY.decode()} metadata)")
    feedback = {key: _unnested(table.column(key)) if key in table.column_names else None for key in ARRAYS}
    return dict(feedback, n_rounds=meta.pop("n_rounds"), n_actions=meta.pop("n_actions"), meta=meta)


def to_obp(feedback: dict) -> dict:
    """OBP's `bandit_feedback`: the per-arm features flattened into one context row per round
    (n, K d), action_context the one-hot arm ids (OBP's default), the log's position (else 0), and the behaviour
    policy's distribution as pi_b (n, K, 1)."""
    n, K = feedback["n_rounds"], feedback["n_actions"]
    position = feedback.get("position")
    out = {
        "n_rounds": n, "n_actions": K, "action": feedback["action"],
        "position": np.zeros(n, dtype=np.int64) if position is None else np.asarray(position),
        "reward": feedback["reward"], "pscore": feedback["pscore"],
        "context": np.asarray(feedback["context"]).reshape(n, -1), "action_context": np.eye(K),
    }
    if feedback.get("action_prob") is not None:
        out["pi_b"] = np.asarray(feedback["action_prob"])[:, :, None]
    if feedback.get("expected_reward") is not None:
        out["expected_reward"] = feedback["expected_reward"]
    return out


def from_obp(bandit_feedback: dict, dim: int | None = None) -> dict:
    """The feedback dict of an OBP `bandit_feedback`. With `dim`, its context rows are per-arm features
    flattened by `to_obp` and are reshaped to (n, K, dim); without, arm k's features in round i are
    [context_i, action_context_k], the input OBP's regression models use. A ranking log keeps its
    `position` (evaluate a ranking target with `ope.at_position`)."""
    bf, n, K = bandit_feedback, int(bandit_feedback["n_rounds"]), int(bandit_feedback["n_actions"])
    position = np.asarray(bf["position"], dtype=np.int64) if bf.get("position") is not None else None
    x = np.asarray(bf["context"], dtype=float)
    if dim is not None:
        if x.shape != (n, K * dim):
            raise ValueError(f"context has shape {x.shape}; per-arm features of dim={dim} need ({n}, {K * dim})")
        context = x.reshape(n, K, dim)
    else:
        arms = np.asarray(bf.get("action_context", np.eye(K)), dtype=float)
        context = np.concatenate([np.repeat(x[:, None], K, axis=1), np.broadcast_to(arms, (n, *arms.shape))], axis=2)
    pi_b = bf.get("pi_b")
    return {
        "n_rounds": n, "n_actions": K, "round": np.arange(1, n + 1), "context": context,
        "action": np.asarray(bf["action"], dtype=np.int64), "reward": np.asarray(bf["reward"], dtype=float),
        "pscore": np.asarray(bf["pscore"], dtype=float) if bf.get("pscore") is not None else None,
        "action_prob": None if pi_b is None else np.asarray(pi_b)[:, :, 0],
        "expected_reward": bf.get("expected_reward"),
        "position": position if position is not None and position.any() else None, "meta": {},
    }


def from_obd(behavior: str = "random", campaign: str = "all", *, data_home=None, path=None,
             check_size: bool = True) -> dict:
    """The Open Bandit Dataset's `behavior` ("random" or "bts") log of `campaign` in the feedback
    layout: action the item id (K = 80 items for "all"), reward the click, pscore the logged
    propensity of that item in its slot, position the 0-based slot (0-2). Each item's features are
    those of the `CtxBandit/OpenBandit-v0` replay ([S2] App. J.1: user embedding, item embedding,
    slot one-hot, log-scaled user-item affinity, user x affinity; d = 44, float32) for every item
    instead of its 5 candidates. action_prob is the Random policy's 1/K in every slot; BTS logs only
    the pscore of the shown item, so its action_prob is None. Files as `datasets.load_open_bandit`."""
    from gym_ctxbandits.datasets import load_open_bandit
    from gym_ctxbandits.envs.replay import obd_features

    data = load_open_bandit(behavior=behavior, campaign=campaign, path=path, data_home=data_home,
                            check_size=check_size)
    users, items, slot, affinity = (x.astype(np.float32) for x in obd_features(data.events, data.items))
    n, K = affinity.shape
    a = affinity[:, :, None]
    context = np.concatenate([np.broadcast_to(users[:, None], (n, K, users.shape[1])),
                              np.broadcast_to(items[None], (n, K, items.shape[1])),
                              np.broadcast_to(slot[:, None], (n, K, slot.shape[1])), a, users[:, None] * a], axis=2)
    events = data.events
    return {
        "n_rounds": n, "n_actions": K, "round": np.arange(1, n + 1), "context": context,
        "action": events["item_id"].to_numpy(np.int64), "reward": events["click"].to_numpy(np.float64),
        "pscore": events["propensity_score"].to_numpy(np.float64),
        "action_prob": np.full((n, K), 1.0 / K) if behavior == "random" else None, "expected_reward": None,
        "position": events["position"].to_numpy(np.int64) - 1,
        "meta": {"dataset": "open-bandit", "behavior": behavior, "campaign": campaign},
    }


def check_env(feedback: dict, env_id: str, env_kwargs: dict | None = None) -> None:
    """Raise a one-line error unless `env_id` (with `env_kwargs`) shows K arms of d features per
    round as the log's contexts do: a target trained there could not act on the log otherwise."""
    if feedback.get("context") is None:
        raise ValueError("the log has no 'context' column (the per-arm features, (n, K, d)), which the target acts on: "
                         "log it with gym_ctxbandits.log (ctxbandits log), or from OBP's layout with feedback.from_obp")
    try:
        env = gym.make(env_id, **(env_kwargs or {}))
    except gym.error.Error as err:
        raise ValueError(f"cannot make {env_id}: {err}") from None
    shape = tuple(env.observation_space.shape)
    env.close()
    logged = tuple(np.shape(feedback["context"])[1:])
    if shape != logged:
        raise ValueError(f"the log's rounds show (K, d) = {logged} (arms, features) but {env_id} with "
                         f"{env_kwargs or {}} shows {shape}: train the target on the env the log was recorded on")


def train(agent, env_id: str, n_rounds: int, seed: int, env_kwargs: dict | None = None):
    """`agent` after playing `n_rounds` rounds of `env_id` from `reset(seed=seed)`: a target policy to
    freeze (it is then only asked for `action_probs`). With the log's seed (or a fixed `instance_seed`)
    it learns the instance the log was recorded on."""
    env = gym.make(env_id, max_episode_steps=max(n_rounds, 1), **(env_kwargs or {}))
    obs, _ = env.reset(seed=seed)
    for _ in range(n_rounds):
        action = agent.act(obs)
        next_obs, reward, _, _, _ = env.step(action)
        agent.observe(obs, action, reward)
        obs = next_obs
    env.close()
    return agent


def target_probs(agent, feedback: dict, draws: int | None = None) -> np.ndarray:
    """A target agent's `action_probs` on every logged round, (n, K): its `action_dist`. The agent is
    not trained on the log (a frozen target)."""
    kwargs = {} if draws is None else {"draws": draws}
    d = getattr(agent, "d_", None)
    if d is not None and d != np.shape(feedback["context"])[-1]:
        raise ValueError(f"the target learned on d = {d} features but the log's arms have "
                         f"d = {np.shape(feedback['context'])[-1]}: train it on the env the log was recorded on")
    return np.stack([agent.action_probs(x, **kwargs) for x in feedback["context"]])


def true_value(feedback: dict, action_dist: np.ndarray) -> float:
    """The target's exact value on the logged rounds, 1/n sum_i sum_k pi(k | x_i) mu(x_i, k), from the
    logged expected rewards: what an unbiased estimator estimates."""
    if feedback.get("expected_reward") is None:
        raise ValueError("this log has no expected rewards (the env does not know them), so no true value")
    mu, pi = np.asarray(feedback["expected_reward"], dtype=float), np.asarray(action_dist, dtype=float)
    if pi.shape != mu.shape:
        raise ValueError(f"action_dist has shape {pi.shape} but the log's expected rewards {mu.shape} (rounds, arms): "
                         "give the target's probabilities of the log's arms on every logged round (target_probs)")
    from gym_ctxbandits.ope import _not_distributions, _rows, _sums

    bad = _not_distributions(pi)
    if bad.any():
        raise ValueError(f"action_dist must hold the target's probabilities, non-negative rows that sum to 1, but "
                         f"{_sums(pi, bad)} {_rows(bad)}: a true value of anything else is not a policy's; normalise "
                         "each row (target_probs gives them)")
    return float((pi * mu).sum(axis=1).mean())


def _nested(pa, value: np.ndarray):
    """An (n, ...) array as a pyarrow column of nested fixed-size lists."""
    column = pa.array(value.reshape(-1))
    for size in reversed(value.shape[1:]):
        column = pa.FixedSizeListArray.from_arrays(column, size)
    return column


def _unnested(column) -> np.ndarray:
    """The (n, ...) array of a column written by `_nested`."""
    import pyarrow as pa

    array, shape = column.combine_chunks(), [len(column)]
    while pa.types.is_fixed_size_list(array.type):
        shape.append(array.type.list_size)
        array = array.flatten()
    return array.to_numpy(zero_copy_only=False).reshape(shape)
