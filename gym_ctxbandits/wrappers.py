"""Gymnasium wrappers for RL pipelines that drive an env themselves (not through `ctxbandits run`).

    env = DelayedFeedback(gym.make("CtxBandit/Linear-v0", max_episode_steps=1000), delay="geometric:20", window=100)
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from gym_ctxbandits.delays import Feedback, FeedbackQueue, delay_rng

ARRIVAL = np.dtype([("round", np.int64), ("action", np.int64), ("reward", np.float64)])


class DelayedFeedback(gym.Wrapper):
    """Delayed, censored or batched rewards (gym_ctxbandits.delays) on any single bandit env.

    Each step's reward is the sum of the rewards that arrive at that step, 0.0 when none does (so a
    learner that only reads `reward` sees late, pooled feedback, as a deployed system does), and
    `info["arrivals"]` lists them, one record (round, action, reward) each, oldest first: a
    structured numpy array of dtype `ARRIVAL`, where `round` is the 0-based step of the episode the
    reward belongs to, so a learner can match it with the observation it kept. Rounds count from
    the episode's reset; rewards still on their way when an episode ends are dropped. The env's
    own step info (`regret`, ...) is that of the action just taken: regret counts when the agent
    acts.

    The delays come from a stream seeded by `reset(seed=...)` (a SeedSequence child of the seed,
    distinct from the env's), so two wrapped envs reset with one seed face the same delays.

    Args:
        env: a single (not vector) env.
        delay, window, default_reward, conversions, feedback_every, batch_grid: the feedback model
            (gym_ctxbandits.delays.Feedback).
        horizon: the episode's length, which only a `batch_grid` needs (its batches divide it).
    """

    def __init__(self, env: gym.Env, delay: str | None = None, window: int | None = None,
                 default_reward: float | None = None, conversions: bool = False, feedback_every: int = 1,
                 batch_grid: str | None = None, horizon: int | None = None):
        super().__init__(env)
        self.feedback = Feedback(delay, window, default_reward, conversions, feedback_every, batch_grid)
        self.horizon = horizon
        if batch_grid is not None and horizon is None:
            raise ValueError(f"batch_grid {batch_grid!r} places its batches over the episode: give horizon=T too")
        self._rng: np.random.Generator | None = None
        self._queue: FeedbackQueue | None = None
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        if seed is not None or self._rng is None:
            self._rng = delay_rng(seed) if seed is not None else np.random.default_rng()
        self._queue = FeedbackQueue(self.feedback, [self._rng], self.horizon, single=True)
        self._t = 0
        return obs, info

    def step(self, action):
        if self._queue is None:
            raise RuntimeError("call reset() before step()")
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._queue.push(self._t, None, int(action), float(reward), info.get("expected_reward"))
        arrived = np.array([(s, a, r) for s, _, a, r, _ in self._queue.pop(self._t)], dtype=ARRIVAL)
        self._t += 1
        return obs, float(arrived["reward"].sum()), terminated, truncated, {**info, "arrivals": arrived}
