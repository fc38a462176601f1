"""The Open Bandit Dataset replay of [S2] App. J.1 (choices: docs/papers.md, S2-A14).

A replay environment plays back logged events instead of simulating rewards: the agent is
shown the arms of a logged event, and the event counts ("is accepted") only when the agent
picks the arm that the logging policy played; its logged click is then the reward. With a
uniformly random logging policy, the accepted events are an unbiased sample of the events the
agent would have met (Li et al. 2011's replay estimator), so the CTR over accepted events
estimates the agent's CTR. That is why the `random` campaign of OBD is the default: the `bts`
logs are not uniform and would bias the estimate. There is no regret (counterfactual clicks are
unknown): `info` has `accepted` and the run loop counts rounds in accepted events.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_ctxbandits.envs.core import _check_action, check_int

USER_DIM, ITEM_DIM, POSITIONS = 16, 8, 3


def _svd_embed(onehot: np.ndarray, dim: int) -> np.ndarray:
    """Truncated SVD of a one-hot matrix: the rows' coordinates on the top `dim` singular directions."""
    u, s, _ = np.linalg.svd(onehot, full_matrices=False)
    out = np.zeros((len(onehot), dim))
    k = min(dim, len(s))
    out[:, :k] = u[:, :k] * s[:k]
    return out / max(np.abs(out).max(), 1e-12)  # scaled into [-1, 1]


def obd_features(events, items) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """[S2] App. J.1's features: (user embedding, item embedding, position one-hot, scaled affinities).

    User and item categorical features are one-hot encoded and compressed by truncated SVD to
    16 and 8 dimensions (the item's numeric feature is kept as a column of its matrix); the
    user-item affinity scores are log-transformed (log1p) and min-max scaled to [-1, 1].
    """
    import pandas as pd

    user_cols = [c for c in events.columns if c.startswith("user_feature_")]
    users = _svd_embed(pd.get_dummies(events[user_cols].astype(str)).to_numpy(np.float64), USER_DIM)
    items = items.sort_values("item_id")
    item_cat = [c for c in items.columns
                if c.startswith("item_feature_") and not pd.api.types.is_numeric_dtype(items[c])]
    item_num = [c for c in items.columns if c.startswith("item_feature_") and c not in item_cat]
    item_matrix = np.hstack([pd.get_dummies(items[item_cat].astype(str)).to_numpy(np.float64),
                             items[item_num].to_numpy(np.float64)])
    item_emb = _svd_embed(item_matrix, ITEM_DIM)
    position = np.eye(POSITIONS)[events["position"].to_numpy() - 1]
    affinity = np.log1p(events[[f"user-item_affinity_{i}" for i in range(len(items))]].to_numpy(np.float64))
    lo, hi = affinity.min(), affinity.max()
    affinity = 2.0 * (affinity - lo) / (hi - lo) - 1.0 if hi > lo else np.zeros_like(affinity)
    return users, item_emb, position, affinity


class OpenBanditEnv(gym.Env):
    """Replay of the Open Bandit Dataset with [S2] App. J.1's reduced action set.

    Description:
        Logged events are replayed in an order drawn from the episode seed. Each event shows
        K = 5 arms: the logged item and the 4 other items of highest user-item affinity for that
        event (ties broken at random), in random order. Each arm's feature is the concatenation
        of the compressed user features (16), the compressed item features (8), the display
        position (one-hot of 3; the paper does not say scalar or one-hot), the log-scaled
        affinity of the item (1) and the interaction user features x affinity (16): d = 44.
        Picking the logged item accepts the event and pays its logged click; any other pick is
        rejected: reward 0, `info["accepted"] = False`, and an agent must not learn from it (the
        run loop does not call `observe` on rejected events).

    Action Space: Discrete(5).
    Observation Space: Box(-1, 1, (5, 44), float32).
    Rewards: the logged click (0 or 1) on accepted events, 0 otherwise.
    Episode End: `terminated=True` when every logged event has been shown once. The paper's
        horizon is 2000 accepted events; a uniformly random agent accepts about 1 event in 5,
        so the 10,000-event sample that obp ships gives about 2000.
    Arguments: behavior="random" (or "bts"), campaign="all", num_arms=5, data_path=None,
        data_home=None, download=True, check_size=True (False: accept a log copied deliberately,
        e.g. a cut of it, that is not the published file).
    Info: `accepted` after each step (also `logged_action`, the arm index of the logged item),
        never before the agent acts.

    Version History:
        * v0: initial version.
    """

    metadata = {"render_modes": []}
    replay = True  # the run loop counts accepted events and observes only those

    def __init__(self, behavior: str = "random", campaign: str = "all", num_arms: int = 5, data_path=None,
                 data_home=None, download: bool = True, check_size: bool = True):
        from gym_ctxbandits import datasets

        data = datasets.load_open_bandit(behavior=behavior, campaign=campaign, path=data_path, data_home=data_home,
                                         download=download, check_size=check_size)
        self.num_arms = check_int("num_arms", num_arms, minimum=2)
        self.users, self.item_emb, self.position, self.affinity = obd_features(data.events, data.items)
        self.logged = data.events["item_id"].to_numpy(np.int64)
        self.clicks = data.events["click"].to_numpy(np.float64)
        if self.num_arms > self.affinity.shape[1]:
            raise ValueError(f"num_arms ({self.num_arms}) exceeds the {self.affinity.shape[1]} items of the log")
        self.dim = USER_DIM + ITEM_DIM + POSITIONS + 1 + USER_DIM
        self.observation_space = spaces.Box(-1.0, 1.0, (self.num_arms, self.dim), np.float32)
        self.action_space = spaces.Discrete(self.num_arms)
        self._order: np.ndarray | None = None

    def _present(self) -> np.ndarray:
        """Candidate items and features of event self._order[self._t]."""
        e = self._order[self._t]
        logged = self.logged[e]
        # Highest affinity first among the other items; a random key breaks the (many) ties.
        others = np.delete(np.arange(self.affinity.shape[1]), logged)
        keys = np.lexsort((self.np_random.random(len(others)), -self.affinity[e, others]))
        candidates = np.append(others[keys[: self.num_arms - 1]], logged)
        self._candidates = candidates[self.np_random.permutation(self.num_arms)]
        a = self.affinity[e, self._candidates][:, None]
        user = np.broadcast_to(self.users[e], (self.num_arms, USER_DIM))
        pos = np.broadcast_to(self.position[e], (self.num_arms, POSITIONS))
        obs = np.hstack([user, self.item_emb[self._candidates], pos, a, user * a])
        return obs.astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._order = self.np_random.permutation(len(self.logged))
        self._t = 0
        return self._present(), {}

    def step(self, action):
        if self._order is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= len(self._order):
            raise RuntimeError("the log is exhausted (terminated=True was returned); call reset()")
        a = _check_action(action, self.num_arms)
        e = self._order[self._t]
        logged_arm = int(np.flatnonzero(self._candidates == self.logged[e])[0])
        accepted = a == logged_arm
        reward = float(self.clicks[e]) if accepted else 0.0
        self._t += 1
        terminated = self._t >= len(self._order)
        obs = np.zeros(self.observation_space.shape, np.float32) if terminated else self._present()
        return obs, reward, terminated, False, {"accepted": np.bool_(accepted), "logged_action": np.int64(logged_arm)}
