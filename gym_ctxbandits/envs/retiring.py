"""The retiring-items bandit of Chapelle & Li (2011), section 3: a non-stationary Bernoulli bandit on the env core.

The set of K items changes with time: a round may retire one item and bring in a new one. That
state lives in the episode's instance dict (the current click probabilities and item ids), which
`draw_round` advances one round at a time from the episode's generator; each episode and each
vector sub-env works on its own copy, so the core's seeding, vector env and pickling hold unchanged.
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv, check_float, check_int


class RetiringItemsEnv(CtxBanditEnv):
    """K items with Beta(4, 4) click probabilities; now and then one retires and a new item replaces it.

    Description:
        Chapelle & Li (2011), "An empirical evaluation of Thompson sampling", section 3 (their Table 1
        compares UCB and Thompson sampling on it with feedback delayed by delta steps): K = 10 items,
        each with a click probability drawn from Beta(4, 4). After each step, with probability
        `retire_prob` = 10^-3 one item, chosen uniformly, retires and a new item with a fresh Beta(4, 4)
        click probability takes its slot. Clicks are Bernoulli. Regret is against the best item of the
        round. The items are exposed as per-item one-hot features: item number i (0, 1, 2, ... in order
        of arrival; the first K are 0..K-1) has the feature vector e_(i mod dim) in R^dim. A new item is
        thus a new direction, and a linear agent on these features keeps one independent estimate per
        item, starting fresh for each newcomer: LinUCB and LinTS become per-item UCB and Gaussian
        Thompson sampling, Chapelle & Li's two policies. Ids wrap around after `dim` items: keep dim above
        the number of items of an episode, K + retire_prob T on average (the default 256 is more than
        twice that at the registered T = 10^5; T = 10^6 as in the paper wants dim >= 1,100 or so). A
        policy that plays arms by index (BaSE) sees slot k, whose item may change.

    Action Space: Discrete(K), the slot of an item.
    Observation Space: Box(-1, 1, (K, dim), float32): the items' one-hot id vectors, changing only when an
        item retires.
    Rewards: 1 (click) with the item's click probability, else 0.
    Episode End: truncation at T = 10^5 rounds (the paper runs 10^6).
    Arguments: num_arms=10, retire_prob=1e-3 (per step, one item retires with this probability), a=4.0,
        b=4.0 (the Beta(a, b) law of click probabilities), dim=256 (id vectors' length, >= num_arms),
        instance_seed=None (fixes the first K items; the retirements and newcomers follow the episode seed).

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 10, retire_prob: float = 1e-3, a: float = 4.0, b: float = 4.0, dim: int = 256,
                 instance_seed: int | None = None):
        self.retire_prob = check_float("retire_prob", retire_prob)
        if self.retire_prob > 1:
            raise ValueError(f"retire_prob must be a probability in [0, 1], got {retire_prob!r}")
        self.a = check_float("a", a, strict=True)
        self.b = check_float("b", b, strict=True)
        if check_int("dim", dim) < check_int("num_arms", num_arms):
            raise ValueError(f"dim must be >= num_arms (one id direction per item on show), got dim={dim} for "
                             f"num_arms={num_arms}")
        super().__init__(num_arms, dim, noise="bernoulli", feature_bound=1.0, instance_seed=instance_seed)

    def draw_instance(self, rng):
        return {"first": rng.beta(self.a, self.b, size=self.num_arms)}

    def _instance(self, rng):
        """A copy per episode and sub-env: the items on show change in it (a fixed instance is shared)."""
        return dict(super()._instance(rng))

    def draw_round(self, rng, instance, t):
        if t == 0:
            instance["p"], instance["ids"] = instance["first"].copy(), np.arange(self.num_arms)
        elif rng.random() < self.retire_prob:
            slot = rng.integers(self.num_arms)
            p, ids = instance["p"].copy(), instance["ids"].copy()   # new arrays: earlier rounds keep theirs
            p[slot], ids[slot] = rng.beta(self.a, self.b), ids.max() + 1
            instance["p"], instance["ids"] = p, ids
        return {"p": instance["p"], "ids": instance["ids"]}

    def round_arrays(self, instances, rounds):
        ids = rounds["ids"] % self.dim
        x = np.zeros((*ids.shape, self.dim), np.float32)
        np.put_along_axis(x, ids[..., None], 1.0, axis=-1)
        return x, rounds["p"], None
