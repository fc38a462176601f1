"""The one run loop: any agent on any env for T rounds and many seeds, with common random numbers.

A comparison is a list of `Job`s, one per (env, agent, seed). A job's result is a tidy table with
one row per logged round: reward and regret of that round, cumulative reward and regret, and the
agent's cumulative wall-clock seconds in `act` and in `observe`. Every agent of a comparison
faces, for a given seed, the same instance, the same arms and contexts each round and the same
noise (an env draws exactly one noise variate per round, whatever the action), so differences
between agents are differences between agents. The agent's own seed is derived from the job seed
through a SeedSequence so it never shares a stream with the env.

Delayed and batched feedback (a job's `feedback`, gym_ctxbandits.delays): each round's obs, action
and reward wait in a `FeedbackQueue` keyed by the round the reward arrives, and the agent gets
`observe(obs_s, a_s, r_s)` with the features of the round s the reward belongs to when it does;
regret is still counted when the agent acts. A batched agent receives the rewards of just the
instances whose feedback arrived: `observe` when all of them did (always so for a fixed delay and
batched updates), else `observe_rows(obs_s, a_s, r_s, rows)`, an optional capability (found with
hasattr, like `action_probs`): obs_s, a_s and r_s are every instance's, and only the instances of
`rows` (an int array) learn from them. The arrivals of one round from several past rounds go in one
`observe_arrivals([(obs_s, a_s, r_s, rows), ...])` (oldest first, rows None for every instance) where
the agent has it, else in one `observe_rows` each. A batched agent without `observe_rows` runs, under
feedback that can reach the instances at different rounds (random delays, conversions), as N single
agents (`PerInstance`): the same numbers, at the plain loop's speed.

The jobs and specs themselves live in `gym_ctxbandits.jobs` (a layer below: this module runs them);
their names are importable from here too.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from gym_ctxbandits.delays import FeedbackQueue, delay_rng
from gym_ctxbandits.jobs import (COLUMNS, SEED_FORMS, AgentSpec, EnvSpec, Job, _short, agent_device,  # noqa: F401
                                 agent_seed, env_creator, env_given, env_spec, import_agents, is_replay, job_inputs,
                                 kind, make_jobs, seed_list)


def run_job(job: Job, agent_factory: Callable[[int], Any] | None = None, progress: Callable[[int], None] | None = None):
    """Run one job with the plain loop; return its tidy table (a pandas DataFrame)."""
    replay = is_replay(job.env.id)
    limit = {} if replay else {"max_episode_steps": job.horizon}
    env = gym.make(job.env.id, **limit, **job.env.kwargs)
    given = env_given(env, job.agent, job.horizon)
    agent = agent_factory(job.seed) if agent_factory else job.agent.build(job.seed, job.device, given)
    obs, _ = env.reset(seed=job.seed)
    where = f"agent {job.agent.title!r} on {job.env.title}, seed {job.seed}"
    log = RunLog(job.log_rounds(), 1)
    queue = None if job.feedback is None else FeedbackQueue(job.feedback, [delay_rng(job.seed)], job.horizon, single=True)
    (_replay_rounds if replay else _rounds)(env, agent, obs, job.horizon, log, where, progress, queue)
    return _table(job, log, 0)


class RunLog:
    """A run's result columns at its logged rounds, for n instances: the round's reward and regret, their
    running sums, and the running sums of the act and observe seconds (per instance).

    Only the logged rows are kept, and the rounds in between in a buffer of BLOCK rounds, so a run's
    memory does not grow with its length. At the end of a block the running sums are taken by one
    np.cumsum over the previous sums and the block, which adds in the order of a cumsum over the whole
    run: the logged values are those of the cumulative sums of full per-round arrays, bit for bit.
    """

    BLOCK = 1024

    def __init__(self, rounds: np.ndarray, n: int):
        self.rounds, self.k, self._last = rounds, 0, int(rounds[-1])    # 1-based logged rounds
        self.reward, self.regret, self.cum_reward, self.cum_regret = (np.empty((len(rounds), n)) for _ in range(4))
        self.act_seconds, self.observe_seconds = np.empty(len(rounds)), np.empty(len(rounds))
        # row 0: the running sums before the block; rows 1..: the block's rounds, from round `_first`
        self._buffers = [np.zeros((self.BLOCK + 1, n)), np.zeros((self.BLOCK + 1, n)),    # reward, regret
                         np.zeros(self.BLOCK + 1), np.zeros(self.BLOCK + 1)]              # act, observe
        self._first = 0

    def add(self, t: int, reward, regret, act_s: float, obs_s: float) -> None:
        """Round t (0-based): its reward and regret (per instance, or one value for all) and seconds."""
        j = t - self._first + 1
        r, g, a, o = self._buffers
        r[j], g[j], a[j], o[j] = reward, regret, act_s, obs_s
        if j == self.BLOCK or t + 1 == self._last:
            self._flush(j)

    def _flush(self, j: int) -> None:
        """The running sums of the block's j rounds; its logged rows kept, the last sums carried over."""
        skip = 1 if self._first == 0 else 0                  # the run's first sum is its first value itself
        sums = [np.cumsum(b[skip:j + 1], axis=0)[1 - skip:] for b in self._buffers]
        stop = np.searchsorted(self.rounds, self._first + j, side="right")
        rows = self.rounds[self.k:stop] - self._first - 1    # the logged rounds' rows in this block
        k = slice(self.k, stop)
        self.reward[k], self.regret[k] = self._buffers[0][rows + 1], self._buffers[1][rows + 1]
        self.cum_reward[k], self.cum_regret[k], self.act_seconds[k], self.observe_seconds[k] = (s[rows] for s in sums)
        for b, s in zip(self._buffers, sums):
            b[0] = s[-1]
        self.k, self._first = stop, self._first + j


def _replay_rounds(env, agent, obs, T: int, log: RunLog, where: str, progress, queue=None) -> None:
    """Play a replay env until T events are accepted; the agent observes accepted events only (with
    a `queue`, when their rewards arrive, rounds counted in accepted events).

    Logs what `_rounds` logs, indexed by accepted event: the logged reward, NaN regret (a replay
    has no counterfactuals), and act/observe seconds (the act time of rejected events is counted
    in the next accepted one).
    """
    clock = time.perf_counter
    tick = max(1, T // 100)
    t = events = 0
    act_s = 0.0
    while t < T:
        t0 = clock()
        action = agent.act(obs)
        act_s += clock() - t0
        try:
            next_obs, r, terminated, truncated, info = env.step(action)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{where}, event {events + 1}: {err}") from err
        events += 1
        if info["accepted"]:
            t2 = clock()
            if queue is None:
                agent.observe(obs, action, r)
            else:
                queue.push(t, obs, action, r)
                _deliver(agent, queue, t)
            log.add(t, r, np.nan, act_s, clock() - t2)
            act_s = 0.0
            t += 1
            if progress and t % tick == 0:
                progress(tick)
        if (terminated or truncated) and t < T:
            raise RuntimeError(f"{where}: the log ran out after {events} events with {t} accepted, before the "
                               f"horizon of {T} accepted events; choose a smaller horizon or a larger log")
        obs = next_obs
    if progress:
        progress(T - (T // tick) * tick)


def _rounds(env, agent, obs, T: int, log: RunLog, where: str, progress, queue: FeedbackQueue | None = None) -> None:
    """Play T rounds of `agent` on `env` (one env, n = 1, or a vector env of n sub-envs).

    Logs per-round reward and regret (n each) and the seconds in act and observe per round
    divided by n (the cost per instance; with a `queue`, observe's include its bookkeeping and
    the deliveries of the round). `where` names the run in error messages. Without a `queue` the
    agent observes each reward at once. A ranking agent observes the round's clicks per position
    (`info["clicks"]`, docs/ranking.md) where a one-arm agent observes the reward.
    """
    n = log.reward.shape[1]
    clock = time.perf_counter
    tick = max(1, T // 100)
    ranking = kind(agent) == "ranking"         # it learns from the clicks per position, its reward their sum
    for t in range(T):
        t0 = clock()
        action = agent.act(obs)
        t1 = clock()
        try:
            next_obs, r, terminated, truncated, info = env.step(action)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{where}, round {t + 1}: {err}") from err
        t2 = clock()
        if queue is None:
            agent.observe(obs, action, info["clicks"] if ranking else r)
        else:
            queue.push(t, obs, action, r, info.get("expected_reward"))
            _deliver(agent, queue, t)
        t3 = clock()
        log.add(t, r, info["regret"], (t1 - t0) / n, (t3 - t2) / n)
        obs = next_obs
        if progress and (t + 1) % tick == 0:
            progress(tick * n)
        if np.any(terminated) or (np.any(truncated) and t + 1 < T):
            raise RuntimeError(f"{where}: the env ended after {t + 1} rounds, before the horizon {T}")
    if progress:
        progress((T - (T // tick) * tick) * n)


def _deliver(agent, queue: FeedbackQueue, t: int) -> None:
    """Give the agent the rewards that arrive at round t, oldest round first (module docstring): under
    partial feedback in one `observe_arrivals` where the agent has it, else one `observe_rows` per
    round the rewards belong to (each instance learns its rewards in the order they arrived)."""
    due = queue.pop(t)
    if len(due) > 1 and hasattr(agent, "observe_arrivals") and any(rows is not None for *_, rows in due):
        agent.observe_arrivals([(obs_s, a_s, r_s, rows) for _, obs_s, a_s, r_s, rows in due])
        return
    for _, obs_s, a_s, r_s, rows in due:
        if rows is None:
            agent.observe(obs_s, a_s, r_s)
        else:
            agent.observe_rows(obs_s, a_s, r_s, rows)


class PerInstance:
    """N single agents behind the batched interface (act on (N, K, d), observe and `observe_rows`):
    how a batched agent that cannot update a subset of its instances runs under partial feedback.
    Agent i is the single agent of seed i, so the numbers are those of the plain loop."""

    batched = True

    def __init__(self, agents: list):
        self.agents = agents

    def act(self, obs) -> np.ndarray:
        return np.array([agent.act(x) for agent, x in zip(self.agents, obs)])

    def observe(self, obs, action, reward) -> None:
        self.observe_rows(obs, action, reward, range(len(self.agents)))

    def observe_rows(self, obs, action, reward, rows) -> None:
        for i in rows:
            self.agents[i].observe(obs[i], int(action[i]), float(reward[i]))


def _table(job: Job, log: RunLog, i: int):
    """The tidy rows of `job`, instance i of `log`."""
    import pandas as pd

    table = {
        "env": job.env.id,
        "env_kwargs": json.dumps(job.env.kwargs, sort_keys=True, default=_short),
        "agent": job.agent.title,
        "agent_kwargs": json.dumps(job.agent.kwargs, sort_keys=True, default=_short),
        "seed": job.seed,
        "round": log.rounds,
        "reward": log.reward[:, i],
        "regret": log.regret[:, i],
        "cum_reward": log.cum_reward[:, i],
        "cum_regret": log.cum_regret[:, i],
        "act_seconds": log.act_seconds,
        "observe_seconds": log.observe_seconds,
    }
    return pd.DataFrame(table, columns=COLUMNS)


def batchable(job: Job) -> bool:
    """True when the agent serves N instances in one object (and so the seeds of `job` can run as one batch)."""
    agent_cls = import_agents().REGISTRY.get(job.agent.name)
    return bool(getattr(agent_cls, "batched", False)) and env_spec(job.env.id).vector_entry_point is not None


def run_batch(jobs: list[Job], progress: Callable[[int], None] | None = None):
    """Run the seeds of one (env, agent) as one native vector env and one batched agent.

    Gives the same numbers as `run_job` on each job: sub-env i is the env of seed i, and the
    batched agent's instance i draws from the stream of agent seed i. The timings of a round
    are those of the whole batch divided by N (the cost per instance).
    """
    first = jobs[0]
    same = ("env", "agent", "horizon", "log_every", "device", "feedback")
    if any(getattr(j, k) != getattr(first, k) for j in jobs for k in same):
        raise ValueError("a batch holds the seeds of one (env, agent, horizon, log_every, device, feedback)")
    n, T = len(jobs), first.horizon
    seeds = [j.seed for j in jobs]
    envs = gym.make_vec(first.env.id, num_envs=n, vectorization_mode="vector_entry_point", max_episode_steps=T,
                        **first.env.kwargs)
    given = env_given(envs, first.agent, T)
    agent = import_agents().make(first.agent.name, seed=[agent_seed(s, first.agent.title) for s in seeds],
                                 **first.agent.kwargs_on(first.device, given))
    fb, queue = first.feedback, None
    if fb is not None:
        queue = FeedbackQueue(fb, [delay_rng(s) for s in seeds], T)
        if fb.partial and not hasattr(agent, "observe_rows"):
            agent = PerInstance([first.agent.build(s, first.device, given) for s in seeds])
    obs, _ = envs.reset(seed=seeds)
    where = f"agent {first.agent.title!r} on {first.env.title}, seeds {seeds}"
    log = RunLog(first.log_rounds(), n)
    _rounds(envs, agent, obs, T, log, where, progress, queue)
    return [_table(job, log, i) for i, job in enumerate(jobs)]


def __getattr__(name: str):
    """`gym_ctxbandits.experiment.run`, removed in 0.4.0 (deprecated since 0.2.0): an AttributeError
    that names the comparison runner, `gym_ctxbandits.run`."""
    if name == "run":
        raise AttributeError("gym_ctxbandits.experiment.run was removed in 0.4.0 (deprecated since 0.2.0): use "
                             "gym_ctxbandits.run (or gym_ctxbandits.compare.run)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
