"""Click models as ranking envs (issue 50): the cascade model, the position-based model (PBM), the dependent
click model (DCM) and the contextual cascade with linear attraction, on the core of envs/ranking.py.

Each family is one class whose kwargs name the settings of the papers (`gym_ctxbandits.registration` registers
them as ids). Attractions w(e) are probabilities; in a round, listed item a_k is attractive when its uniform
is below w(a_k), and the position uniforms decide examination (PBM) or satisfaction (DCM).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from gym_ctxbandits.envs.core import check_float, check_int
from gym_ctxbandits.envs.ranking import RankingEnv


def _probabilities(name: str, values, length: int | None = None) -> np.ndarray:
    """`values` as a 1-D float64 array of probabilities (of `length` when given), or a ValueError naming it."""
    try:
        out = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of probabilities in [0, 1], got {values!r}") from None
    if out.ndim != 1 or len(out) == 0 or not np.all((out >= 0) & (out <= 1)):
        raise ValueError(f"{name} must be a non-empty sequence of probabilities in [0, 1], got {values!r}")
    if length is not None and len(out) != length:
        raise ValueError(f"{name} needs {length} values, got {len(out)}")
    return out


def _first_click(attracted: np.ndarray) -> np.ndarray:
    """(N, K) bool: the first attractive position of each row (none when no position is attractive)."""
    return attracted & (np.cumsum(attracted, axis=1) == 1)


class _CascadeClicks(RankingEnv):
    """The cascade model's reward and clicks (Kveton et al. 2015, section 2), shared by CascadeEnv and
    ContextualCascadeEnv."""

    def expected_reward(self, instances, w):
        # f(A, w) = 1 - prod_k (1 - w(a_k)), Kveton et al. (2015) section 2; sorted, so every order of a set is equal
        return 1.0 - np.prod(1.0 - np.sort(w, axis=1), axis=1)

    def clicks(self, instances, w, u_items, u_positions):
        click = _first_click(u_items < w)
        examined = (np.cumsum(click, axis=1) - click) == 0  # up to and including the first click
        return click, examined, click.any(axis=1).astype(np.float64)


class CascadeEnv(_CascadeClicks):
    """The cascade model: the user scans the list from the top and clicks the first attractive item.

    Description:
        Craswell et al. (2008), as a bandit by Kveton, Szepesvari, Wen, Ashkan (2015), "Cascading bandits:
        learning to rank in the cascade model", section 2: item e is attractive with probability w(e),
        independently; the user examines positions 1, 2, ... until the first attractive item, clicks it and
        leaves. Reward: 1 when the user clicks, with expectation f(A, w) = 1 - prod_k (1 - w(a_k)). The best
        list holds the K most attractive items (in any order; optimal_action lists them in decreasing w).
        Attractions: `attractions` given; else Beta(a, b) draws per instance with `beta_prior=(a, b)` (Russo
        et al. 2018, "A tutorial on Thompson sampling", section 7, cascading recommendations: 50 items, 10 positions, Beta(1, 10));
        else the paper's BLB(L, K, p, Delta) class (section 6.1): the first K items attract with p, the
        other L - K with p - Delta.
    Action Space: RankingSpace (MultiDiscrete([L] * K) of distinct items), position 0 the top.
    Observation Space: Box(0, 1, (L, L), float32): one-hot item ids (item i is row i).
    Rewards: 1 if the user clicked, else 0. info: clicks (K,) int8 (at most one 1), examined (K,) bool (the
        positions up to and including the click; all K without a click), expected_reward,
        optimal_expected_reward, optimal_action (K,), regret.
    Episode End: truncation at T (CascadeBLB-v0: n = 10^5 as Kveton et al.; CascadeRusso-v0: 5,000 as Russo
        et al.'s figure).
    Arguments: num_items=16 (L), num_positions=4 (K), p=0.2, delta=0.15 (BLB), beta_prior=None ((a, b): draw
        w(e) ~ Beta(a, b) per instance), attractions=None (the L probabilities, fixed), instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_items: int = 16, num_positions: int = 4, p: float = 0.2, delta: float = 0.15,
                 beta_prior: Sequence[float] | None = None, attractions: Sequence[float] | None = None,
                 instance_seed: int | None = None):
        self.fixed_attractions = self.beta_prior = None
        self.p, self.delta = check_float("p", p), check_float("delta", delta)
        if attractions is not None:
            if beta_prior is not None:
                raise ValueError("pass attractions (fixed) or beta_prior (drawn per instance), not both")
            self.fixed_attractions = _probabilities("attractions", attractions, check_int("num_items", num_items))
        elif beta_prior is not None:
            if len(beta_prior) != 2:
                raise ValueError(f"beta_prior must be (a, b) of Beta(a, b), got {beta_prior!r}")
            self.beta_prior = tuple(check_float(n, v, strict=True) for n, v in zip(("a", "b"), beta_prior))
        elif self.p > 1 or self.delta > self.p:
            raise ValueError(f"BLB needs 0 <= delta <= p <= 1 (attractions p and p - delta), got p={p}, delta={delta}")
        self.random_instance = self.beta_prior is not None
        super().__init__(num_items, num_positions, num_items, instance_seed=instance_seed)

    def draw_instance(self, rng):
        if self.beta_prior is not None:
            return {"attractions": rng.beta(*self.beta_prior, size=self.num_items)}
        if self.fixed_attractions is not None:
            return {"attractions": self.fixed_attractions}
        k = self.num_positions  # BLB(L, K, p, Delta): K items attract with p, L - K with p - Delta
        return {"attractions": np.r_[np.full(k, self.p), np.full(self.num_items - k, self.p - self.delta)]}


class DCMEnv(CascadeEnv):
    """The dependent click model: the user clicks every attractive item until satisfied.

    Description:
        Guo et al. (2009), as a bandit by Katariya, Kveton, Szepesvari, Wen (2016), "DCM bandits: learning to
        rank with multiple clicks", section 2: the user examines the list from the top; item a_k is attractive
        with probability w(a_k) and clicked when it is; after a click at position k the user is satisfied and
        leaves with the termination probability v(k), else goes on. Reward: 1 when the user leaves satisfied,
        with expectation f(A, v, w) = 1 - prod_k (1 - v(k) w(a_k)) (their section 2). The best list puts the K
        most attractive items in decreasing order of attraction at the positions in decreasing order of v.
        Registered setting (DCM-v0, our choice where the paper's text was not at hand): Kveton et al.'s BLB
        class, L = 16, K = 4, p = 0.2, Delta = 0.15, with termination probabilities v(k) = 0.8 for every k.
    Action Space: RankingSpace (MultiDiscrete([L] * K) of distinct items), position 0 the top.
    Observation Space: Box(0, 1, (L, L), float32): one-hot item ids.
    Rewards: 1 if the user left satisfied, else 0 (Katariya et al.'s reward; clicks alone do not reveal it).
        info: clicks (K,) int8 (every clicked position), examined (K,) bool (up to where the user left; all K
        when not satisfied), expected_reward, optimal_expected_reward, optimal_action (K,), regret.
    Episode End: truncation at T = 10^5.
    Arguments: num_items=16, num_positions=4, p=0.2, delta=0.15, beta_prior=None, attractions=None (the
        attraction kwargs of CascadeEnv), termination=0.8 (v(k): one probability for every position, or K of
        them), instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_items: int = 16, num_positions: int = 4, p: float = 0.2, delta: float = 0.15,
                 beta_prior: Sequence[float] | None = None, attractions: Sequence[float] | None = None,
                 termination: float | Sequence[float] = 0.8, instance_seed: int | None = None):
        k = check_int("num_positions", num_positions)
        v = np.broadcast_to(termination, (k,)) if np.ndim(termination) == 0 else termination
        self.termination = _probabilities("termination", v, k)
        super().__init__(num_items, num_positions, p, delta, beta_prior, attractions, instance_seed)

    def position_weights(self, instances):
        return np.broadcast_to(self.termination, (len(instances["attractions"]), self.num_positions))

    def expected_reward(self, instances, w):
        return 1.0 - np.prod(1.0 - self.termination * w, axis=1)  # f(A, v, w), Katariya et al. (2016) section 2

    def clicks(self, instances, w, u_items, u_positions):
        click = u_items < w
        satisfied = _first_click(click & (u_positions < self.termination))
        examined = (np.cumsum(satisfied, axis=1) - satisfied) == 0  # up to where the user left satisfied
        return click & examined, examined, satisfied.any(axis=1).astype(np.float64)


class PBMEnv(RankingEnv):
    """The position-based model: position k is examined with probability kappa_k, item e attracts with theta_e.

    Description:
        Richardson et al. (2007); as a bandit by Lagree, Vernade, Cappe (2016), "Multiple-play bandits in the
        position-based model", and Gauthier, Gaudel, Fromont, Lompo (2021), "Parametric graph for unimodal
        ranking bandit" (GRAB), section 5: the user examines position k with probability kappa_k and clicks
        the item there when it is examined and attractive (probability theta_e), independently across
        positions. Reward: the number of clicks, with expectation sum_k kappa_k theta(a_k). The best list puts
        the K most attractive items in decreasing order at the positions in decreasing order of kappa.
        Settings (`setting`): "kdd" and "yandex", PBMs fitted on real logs (`gym_ctxbandits.datasets.ranking`:
        KDD Cup 2012, 8 queries, 3 positions; Yandex, 60 queries, each query's 10 most attractive items and 5
        most examined positions), read from $CTXBANDITS_DATA/ranking/ (or `data_path`); "std", GRAB's
        simulated setting (kappas 1, 0.75, 0.6, 0.3, 0.1; thetas 0.3, 0.2, 0.15 x 3, 0.1, 0.05 x 2, 0.01 x 2);
        or `attractions` and `kappas` given. One id plays one query (`query`, default the first); GRAB reports
        results merged over the queries (20 runs each): run every query (`query=0..7` for KDD, `0..59` for
        Yandex; `gym_ctxbandits.datasets.ranking.pbm_queries` lists them) and average the regret curves.
        Positions keep their kappas in the given order (GRAB shuffles them per game for agents that do not
        know them); `env.unwrapped.kappas` gives them to agents that do (the runner passes them).
    Action Space: RankingSpace (MultiDiscrete([L] * K) of distinct items), position 0 the first of `kappas`.
    Observation Space: Box(0, 1, (L, L), float32): one-hot item ids.
    Rewards: the number of clicks. info: clicks (K,) int8, examined (K,) bool (the examination draws),
        expected_reward, optimal_expected_reward, optimal_action (K,), regret.
    Episode End: truncation at T = 10^5 (GRAB's runs).
    Arguments: setting="std" ("kdd", "yandex", "std", or None with attractions and kappas), query=0 (an index
        in file order, GRAB's numbering, or a query id), attractions=None, kappas=None, data_path=None (a file or
        folder holding param_KDD.json / param_Yandex.json), data_home=None ($CTXBANDITS_DATA), instance_seed=None
        (accepted as by every family; the instance is given, so it changes nothing).

    Version History:
        * v0: initial version.
    """

    random_instance = False

    def __init__(self, setting: str | None = "std", query: int | str = 0, attractions: Sequence[float] | None = None,
                 kappas: Sequence[float] | None = None, data_path=None, data_home=None, instance_seed: int | None = None):
        from gym_ctxbandits.datasets.ranking import load_pbm

        if (attractions is None) != (kappas is None):
            raise ValueError("pass both attractions and kappas (with setting=None), or neither")
        if attractions is not None:
            if setting is not None:
                raise ValueError(f"attractions and kappas replace a setting: pass setting=None, not {setting!r}")
            self.query = None
            theta, kappa = _probabilities("attractions", attractions), _probabilities("kappas", kappas)
        elif setting is None:
            raise ValueError("setting=None needs attractions and kappas")
        else:
            params = load_pbm(setting, query, path=data_path, data_home=data_home)
            self.query = params.query
            theta, kappa = params.attractions, params.kappas
        self.setting = setting
        self.fixed_attractions, self.kappas = theta, kappa
        super().__init__(len(theta), len(kappa), len(theta), instance_seed=instance_seed)

    def draw_instance(self, rng):
        return {"attractions": self.fixed_attractions}

    def position_weights(self, instances):
        return np.broadcast_to(self.kappas, (len(instances["attractions"]), self.num_positions))

    def expected_reward(self, instances, w):
        return (self.kappas * w).sum(axis=1)  # sum_k kappa_k theta(a_k)

    def clicks(self, instances, w, u_items, u_positions):
        examined = u_positions < self.kappas
        click = examined & (u_items < w)
        return click, examined, click.sum(axis=1).astype(np.float64)


class ContextualCascadeEnv(_CascadeClicks):
    """The cascade model with linear attraction: w(e) = x_e^T theta*, items described by features.

    Description:
        Zong, Ni, Sung, Ke, Wen, Kveton (2016), "Cascading bandits for large-scale recommendation problems",
        section 3: item e has features x_e in R^d and attracts with w(e) = x_e^T theta*, theta* unknown; the
        clicks follow the cascade model (CascadeEnv), so CascadeLinUCB and CascadeLinTS learn theta* from the
        examined items. Both x_e and theta* lie in the unit ball with nonnegative entries, so w(e) is in [0, 1].
        Instance (drawn per seed, our choice: the paper's experiments build features from real data): theta*
        = `theta_norm` |z| / ||z||, x_e = r_e |z_e| / ||z_e||, z, z_e ~ N(0, I_d), r_e ~ U[0, 1]. With the
        defaults L = 100, K = 4, d = 20, theta_norm = 0.5 the attractions lie in [0, 0.5] (about 0.16 on
        average; 100 seeds: mean 0.166, max 0.47), and the best list is clicked with probability 0.77 to 0.87
        (mean 0.83).
    Action Space: RankingSpace (MultiDiscrete([L] * K) of distinct items), position 0 the top.
    Observation Space: Box(0, 1, (L, d), float32): the items' features x_e (fixed within an episode).
    Rewards: 1 if the user clicked, else 0; info as CascadeEnv's.
    Episode End: truncation at T = 10^5.
    Arguments: num_items=100 (L), num_positions=4 (K), dim=20 (d), theta_norm=0.5 (||theta*|| <= 1),
        instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_items: int = 100, num_positions: int = 4, dim: int = 20, theta_norm: float = 0.5,
                 instance_seed: int | None = None):
        self.theta_norm = check_float("theta_norm", theta_norm)
        if self.theta_norm > 1:
            raise ValueError(f"theta_norm must be in [0, 1] (theta* in the unit ball), got {theta_norm!r}")
        super().__init__(num_items, num_positions, dim, instance_seed=instance_seed)

    def draw_instance(self, rng):
        z = np.abs(rng.standard_normal(self.dim))
        theta = self.theta_norm * z / np.linalg.norm(z)
        x = np.abs(rng.standard_normal((self.num_items, self.dim)))
        x *= rng.random((self.num_items, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
        return {"features": x.astype(np.float32), "theta": theta}

    def item_features(self, instances):
        return instances["features"]

    def item_attractions(self, instances):
        # w(e) = x_e^T theta*, Zong et al. (2016) section 3, on the float32 features the agent sees
        return np.clip(np.einsum("nld,nd->nl", instances["features"].astype(np.float64), instances["theta"]), 0, 1)
