"""Conformance suite for contextual-bandit environments: the checks every registered `CtxBandit/`
id passes, for your own envs too (Gymnasium's `check_env` plus the contract of the README's
"The contract", in the spirit of `agents.checks`).

    from gym_ctxbandits.checks import check_env
    check_env("CtxBandit/Logistic-v0")            # a registered id; kwargs go to gym.make / make_vec
    check_env(MyEnv, dim=3)                       # an env class (or a function returning a fresh env)

The checks need fresh envs with chosen kwargs, so they take an id or a class, not an env object.
Each check takes an `EnvFactory` (`as_factory(id_or_env, **kwargs)`) and raises AssertionError
naming the env, what failed and how to fix it:

* `check_gymnasium`: Gymnasium's `check_env`, without a warning, after our own check that the first
  observation lies in the observation space (an error naming `feature_bound` when it does not);
* `check_determinism`: two envs reset with one seed give the same observations, rewards and infos;
  another seed gives others;
* `check_pickle`: an env pickled mid-episode and restored continues exactly like the original;
* `check_info`: the info contract: reset's info holds only what an agent may see before acting
  (`ROUND_KEYS`); each step's info holds `STEP_KEYS` as numpy scalars with a consistent regret
  (>= 0, the gap of the means, 0 for the announced optimal arm), or for a replay env (`replay =
  True`) `accepted` and no regret; an `action_mask` is (K,) int8; with `noise="bernoulli"` every
  arm's expected reward is a probability in [0, 1] and every reward 0 or 1; a non-stationary env may add
  `change_point` (`CHANGE_KEYS`, a numpy bool: the round just played started a new segment);
* `check_vector_env`: the native vector env (the id's `vector_entry_point`, or the one the core
  builds for a `CtxBanditEnv` class) equals N single envs seeded `seed + i`, autoreset included;
  skipped for a replay env, and skipped with a `UserWarning` saying how to add one for any other
  env without one;
* `check_instance_seed`: for an env with `instance_seed` and `instance` (every `CtxBanditEnv`):
  `instance_seed` fixes the instance and leaves the rounds and noise to the episode seed;
  without it the instance changes with the episode seed, unless the env declares it given
  (`random_instance = False`: a hand-built action set, a dataset), when it never does.

* `check_ranking`: for a ranking env (`kind = "ranking"`, envs/ranking.py; the other checks take its
  lists too, and `check_info` holds it to the ranking info: `clicks`, `examined`, the optimal list):
  a MultiDiscrete([L] * K) action space, repeated / out-of-range / wrong-length / non-integer lists
  refused, and common random numbers (the same users whatever the list); skipped for a one-arm env.

Step info beyond the contract is refused (it might reveal the optimum): name a documented extra
key of your env with `check_env(..., info_keys=("my_key",))`.
"""

from __future__ import annotations

import pickle
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from gymnasium.wrappers import TimeLimit

from gym_ctxbandits.envs.core import CtxBanditEnv, OneTimeCostWarning, vector_env
from gym_ctxbandits.envs.ranking import RankingEnv, ranking_vector_env

STEP_KEYS = frozenset({"expected_reward", "optimal_expected_reward", "optimal_action", "regret"})
# What an agent may know before acting: shown with each round's observation, so never the optimum.
ROUND_KEYS = frozenset({"action_mask", "context"})
REPLAY_KEYS = frozenset({"accepted"})
# A ranking env's step info (kind = "ranking"): the per-position feedback, then the contract's keys.
RANKING_KEYS = STEP_KEYS | {"clicks", "examined"}
# a non-stationary env's step info (docs/nonstationary.md): True when the round just played started a segment
CHANGE_KEYS = frozenset({"change_point"})


@dataclass(frozen=True)
class EnvFactory:
    """Fresh envs for the checks: `make(**extra)` a single env, `make_vec(n, **extra)` the native vector
    env of n sub-envs (None when there is none); `extra` (max_episode_steps, instance_seed) goes on top
    of the user's kwargs. `info_keys`: documented step-info keys beyond the contract."""

    name: str
    make: Callable[..., gym.Env]
    make_vec: Callable[..., Any] | None
    info_keys: frozenset[str] = frozenset()


def as_factory(id_or_env, *, info_keys=(), **kwargs) -> EnvFactory:
    """An `EnvFactory` for a registered id (`gym.make(id, **kwargs)`, the registered vector entry point)
    or for a callable returning a fresh env (an env class; a `CtxBanditEnv` class gets the core's vector env)."""
    if isinstance(id_or_env, str):
        spec = gym.spec(id_or_env)

        def make_vec(n, **extra):
            return gym.make_vec(id_or_env, num_envs=n, vectorization_mode="vector_entry_point", **{**kwargs, **extra})

        return EnvFactory(id_or_env, lambda **extra: gym.make(id_or_env, **{**kwargs, **extra}),
                          make_vec if spec.vector_entry_point else None, frozenset(info_keys))
    if isinstance(id_or_env, gym.Env) or not callable(id_or_env):
        raise TypeError(f"check_env takes a registered env id or an env class (or a function returning a fresh env), "
                        f"got {id_or_env!r}: the checks make fresh envs, so pass check_env(MyEnv, **kwargs)")

    def make(max_episode_steps=None, **extra):
        env = id_or_env(**{**kwargs, **extra})
        return env if max_episode_steps is None else TimeLimit(env, max_episode_steps)

    native = isinstance(id_or_env, type) and issubclass(id_or_env, (CtxBanditEnv, RankingEnv))

    def make_native_vec(n, **extra):
        build = ranking_vector_env if issubclass(id_or_env, RankingEnv) else vector_env
        return build(id_or_env, id_or_env.__module__)(num_envs=n, **{**kwargs, **extra})

    return EnvFactory(getattr(id_or_env, "__name__", repr(id_or_env)), make, make_native_vec if native else None,
                      frozenset(info_keys))


# -- helpers ------------------------------------------------------------------------------------
def _available(info: dict, num_arms: int) -> np.ndarray:
    """The arms an agent may play now: those of `info["action_mask"]`, else all."""
    return np.flatnonzero(info["action_mask"]) if "action_mask" in info else np.arange(num_arms)


def _is_ranking(env) -> bool:
    """Whether the env takes a list of items (`kind = "ranking"`, envs/ranking.py) rather than one arm."""
    return getattr(env.unwrapped, "kind", "arm") == "ranking"


def _random_action(env, info: dict, rng: np.random.Generator):
    """A random valid action: an available arm, or for a ranking env a list of K distinct items."""
    if _is_ranking(env):
        model = env.unwrapped
        return rng.permutation(model.num_items)[: model.num_positions]
    arms = _available(info, env.action_space.n)
    return int(arms[rng.integers(len(arms))])


def _first_action(env, info: dict):
    """A fixed valid action: the first available arm, or the list 0, 1, ..., K - 1."""
    if _is_ranking(env):
        return np.arange(env.unwrapped.num_positions)
    return int(_available(info, env.action_space.n)[0])


def _rollout(f: EnvFactory, env, seed: int, steps: int, action_seed: int = 0) -> list[tuple]:
    """[(obs, reward, info)] of reset(seed) and `steps` random available actions."""
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    out = [(obs, None, info)]
    for t in range(steps):
        obs, reward, terminated, truncated, info = env.step(_random_action(env, info, rng))
        assert terminated is False, (
            f"{f.name}: step {t} returned terminated={terminated!r}: a bandit run ends only by truncation at "
            "max_episode_steps (a replay log when it is exhausted), so return terminated=False")
        out.append((obs, reward, info))
    return out


def _first_difference(a: list[tuple], b: list[tuple]) -> str | None:
    """Where two rollouts first differ ("step 3: info['regret']"), or None when they are equal."""
    for t, ((obs_a, r_a, info_a), (obs_b, r_b, info_b)) in enumerate(zip(a, b, strict=True)):
        where = "reset" if t == 0 else f"step {t}"
        if not np.array_equal(obs_a, obs_b):
            return f"{where}: the observation"
        if r_a != r_b:
            return f"{where}: the reward ({r_a!r} vs {r_b!r})"
        if info_a.keys() != info_b.keys():
            return f"{where}: the info keys ({sorted(info_a)} vs {sorted(info_b)})"
        for key in info_a:
            if not np.array_equal(info_a[key], info_b[key]):
                return f"{where}: info[{key!r}]"
    return None


def _instances_differ(a: dict, b: dict) -> bool:
    return a.keys() != b.keys() or any(not np.array_equal(a[k], b[k]) for k in a)


def _is_replay(env) -> bool:
    return bool(getattr(env.unwrapped, "replay", False))


def _check_observation(f: EnvFactory, space, obs, where: str) -> None:
    """`obs` lies in the Box `space`, or an AssertionError saying which way it does not and the fix."""
    if space.contains(obs):
        return
    shape, dtype = np.shape(obs), getattr(obs, "dtype", type(obs).__name__)
    assert shape == space.shape and np.can_cast(dtype, space.dtype), (
        f"{f.name}: {where} observation has shape {shape} and dtype {dtype}; the observation space is {space}: "
        "return the round's (K, d) float32 arm features")
    low, high = float(np.min(obs)), float(np.max(obs))
    raise AssertionError(
        f"{f.name}: {where} observation is not within the observation space {space}: its features span "
        f"[{low:.4g}, {high:.4g}]; pass their bound to the core, super().__init__(..., "
        f"feature_bound={max(abs(low), abs(high)):.4g}) (np.inf when unbounded), or scale the features into "
        "[-feature_bound, feature_bound]")


def _check_bernoulli_means(f: EnvFactory, env, reward, where: str) -> None:
    """With Bernoulli noise, the round's expected rewards are probabilities and `reward` is 0 or 1."""
    model = env.unwrapped
    if getattr(model, "noise", None) != "bernoulli" or not hasattr(model, "expected_rewards"):
        return
    means = model.expected_rewards
    assert np.all((means >= 0) & (means <= 1)), (
        f"{f.name}: {where} expected rewards span [{means.min():.4g}, {means.max():.4g}], but noise='bernoulli' draws "
        "each reward as Bernoulli(mean), which needs a probability in [0, 1]: pass the means through a link "
        "(gym_ctxbandits.envs.core.sigmoid) or use noise='gaussian'")
    assert reward is None or reward in (0.0, 1.0), f"{f.name}: {where} Bernoulli reward is {reward!r}, not 0 or 1"


# -- the checks ---------------------------------------------------------------------------------
def check_gymnasium(f: EnvFactory) -> None:
    """The first observation lies in the observation space, and Gymnasium's `check_env` (spaces,
    reset/step signatures, seeding) passes without a warning, but for an env's notice of a one-time
    cost (`OneTimeCostWarning`: Gymnasium's close check makes the env again)."""
    env = f.make()
    _check_observation(f, env.observation_space, env.unwrapped.reset(seed=0)[0], "reset's")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            gymnasium_check_env(env.unwrapped, skip_render_check=True)
        except AssertionError as err:
            raise AssertionError(f"{f.name}: gymnasium's check_env failed: {err}") from err
    messages = [str(w.message) for w in caught if not issubclass(w.category, OneTimeCostWarning)]
    assert not messages, f"{f.name}: gymnasium's check_env warned; fix what it says: {messages}"


def check_determinism(f: EnvFactory) -> None:
    """Two envs reset with the same seed give the same observations, rewards and infos; another seed
    gives another trajectory."""
    first = _rollout(f, f.make(), 42, 50)
    where = _first_difference(first, _rollout(f, f.make(), 42, 50))
    assert where is None, (
        f"{f.name}: two envs reset with seed=42 differ at {where}: draw every random number from self.np_random "
        "(reset starts with super().reset(seed=seed)); no global numpy/torch RNG, no space.sample()")
    other = _rollout(f, f.make(), 43, 50)
    assert any(not np.array_equal(x[0], y[0]) or x[1] != y[1] for x, y in zip(first, other)), (
        f"{f.name}: seeds 42 and 43 give the same observations and rewards for 50 steps: the episode seed must "
        "drive the rounds and the noise (draw them from self.np_random)")


def check_pickle(f: EnvFactory) -> None:
    """An env pickled and restored mid-episode continues exactly like the original."""
    env = f.make()
    *_, (_, _, info) = _rollout(f, env, 3, 10)
    try:
        clone = pickle.loads(pickle.dumps(env))
    except Exception as err:
        raise AssertionError(f"{f.name}: an env mid-episode does not pickle ({err!r}): keep its state in plain "
                             "attributes (arrays, numpy Generators), no lambdas, open files or locks") from err
    rng = np.random.default_rng(1)
    for t in range(20):
        a = _random_action(env, info, rng)
        x, y = env.step(a), clone.step(a)
        info = x[4]
        where = _first_difference([(x[0], x[1], x[4])], [(y[0], y[1], y[4])])
        assert where is None and x[2:4] == y[2:4], (
            f"{f.name}: {t + 1} steps after a pickle round trip the copy differs from the original "
            f"({where or 'terminated/truncated'}): every random stream and the round state must be pickled with "
            "the env")


def _check_scalar(f: EnvFactory, info: dict, key: str, kind: str, where: str) -> None:
    value = info[key]
    assert hasattr(value, "dtype") and np.shape(value) == () and value.dtype.kind in kind, (
        f"{f.name}: {where} info[{key!r}] is {value!r} of type {type(value).__name__}; it must be a numpy scalar "
        f"of kind {kind!r} (np.float64(...), np.int64(...), np.bool_(...)): RL libraries read its dtype")


def _check_round_info(f: EnvFactory, info: dict, num_arms: int, where: str) -> None:
    """Every value has a dtype; an action mask is the (K,) int8 array of Gymnasium's masking convention."""
    untyped = sorted(k for k, v in info.items() if not hasattr(v, "dtype"))
    assert not untyped, f"{f.name}: {where} info values {untyped} are not numpy scalars or arrays: give them a dtype"
    if "action_mask" in info:
        mask = info["action_mask"]
        assert mask.shape == (num_arms,) and mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}, (
            f"{f.name}: {where} info['action_mask'] must be a ({num_arms},) int8 array of 0/1 (Gymnasium's "
            f"masking convention), got shape {mask.shape}, dtype {mask.dtype}")
        assert mask.any(), f"{f.name}: {where} info['action_mask'] has no available arm"


def check_info(f: EnvFactory) -> None:
    """The info contract: what reset's and each step's info hold, their numpy types, and the regret."""
    env = f.make()
    if _is_ranking(env):
        return _check_ranking_info(f, env)
    replay = _is_replay(env)
    obs, info = env.reset(seed=0)
    k = env.action_space.n
    assert set(info) <= ROUND_KEYS, (
        f"{f.name}: reset's info has {sorted(set(info) - ROUND_KEYS)}: before the agent acts the info may hold only "
        f"{sorted(ROUND_KEYS)}, nothing that reveals the optimum")
    _check_round_info(f, info, k, "reset's")
    if not replay:
        _check_bernoulli_means(f, env, None, "reset's")
    allowed = (REPLAY_KEYS if replay else STEP_KEYS | CHANGE_KEYS) | ROUND_KEYS | f.info_keys
    for t in range(30):
        arms = _available(info, k)
        a = int(arms[t % len(arms)])
        obs, reward, terminated, truncated, info = env.step(a)
        where = f"step {t}'s"
        _check_observation(f, env.observation_space, obs, where)
        assert isinstance(reward, float) and np.isfinite(reward), (
            f"{f.name}: {where} reward {reward!r} must be a finite float")
        assert set(info) <= allowed, (
            f"{f.name}: {where} info has {sorted(set(info) - allowed)}, not in the contract; if it is documented "
            "problem-specific step info, name it: check_env(..., info_keys=(...))")
        _check_round_info(f, info, k, where)
        if "change_point" in info:
            _check_scalar(f, info, "change_point", "b", where)
        if replay:
            assert "accepted" in info, f"{f.name}: a replay env (replay = True) must give info['accepted'] every step"
            _check_scalar(f, info, "accepted", "b", where)
            assert info["accepted"] or reward == 0.0, f"{f.name}: {where} rejected event paid {reward}; it must pay 0"
            continue
        _check_bernoulli_means(f, env, reward, where)
        missing = STEP_KEYS - set(info)
        assert not missing, (f"{f.name}: {where} info lacks {sorted(missing)}: every step of a simulated env gives "
                             f"{sorted(STEP_KEYS)} (a replay env sets replay = True and gives 'accepted')")
        for key in ("expected_reward", "optimal_expected_reward", "regret"):
            _check_scalar(f, info, key, "f", where)
        _check_scalar(f, info, "optimal_action", "iu", where)
        assert 0 <= info["optimal_action"] < k, (
            f"{f.name}: {where} optimal_action {info['optimal_action']} is not an arm in [0, {k})")
        assert info["regret"] >= 0, f"{f.name}: {where} regret {info['regret']} < 0: regret is max(optimal - chosen, 0)"
        gap = info["optimal_expected_reward"] - info["expected_reward"]
        assert abs(info["regret"] - gap) <= 1e-12, (
            f"{f.name}: {where} regret {info['regret']} is not optimal_expected_reward - expected_reward = {gap}")
    if replay:
        return
    # The announced optimal arm of a round costs nothing: learn it from a copy, then play it.
    clone = pickle.loads(pickle.dumps(env))
    *_, clone_info = clone.step(int(_available(info, k)[0]))
    *_, info = env.step(int(clone_info["optimal_action"]))
    assert info["regret"] == 0.0, (
        f"{f.name}: playing the round's optimal_action cost regret {info['regret']}: optimal_action must be the "
        "argmax of the available arms' expected rewards")


def _check_ranking_info(f: EnvFactory, env) -> None:
    """check_info for a ranking env: reset's info is empty of the optimum; each step gives the per-position
    feedback `clicks` ((K,) int8 0/1) and `examined` ((K,) bool, every click examined), the contract's
    scalars, an optimal list of K distinct items, and a regret that is the gap and 0 for that list."""
    model = env.unwrapped
    big_l, k = model.num_items, model.num_positions
    obs, info = env.reset(seed=0)
    assert set(info) <= ROUND_KEYS - {"action_mask"}, (
        f"{f.name}: reset's info has {sorted(info)}: before the agent acts a ranking env's info may hold only "
        "'context', nothing that reveals the best list")
    allowed = RANKING_KEYS | f.info_keys
    rng = np.random.default_rng(0)
    for t in range(30):
        obs, reward, terminated, truncated, info = env.step(_random_action(env, info, rng))
        where = f"step {t}'s"
        _check_observation(f, env.observation_space, obs, where)
        assert isinstance(reward, float) and np.isfinite(reward), f"{f.name}: {where} reward {reward!r} must be a finite float"
        assert RANKING_KEYS <= set(info) <= allowed | ROUND_KEYS, (
            f"{f.name}: {where} info has keys {sorted(info)}; a ranking env gives {sorted(RANKING_KEYS)} and only "
            "documented extras (name them: check_env(..., info_keys=(...)))")
        clicks, examined = info["clicks"], info["examined"]
        assert clicks.shape == (k,) and clicks.dtype == np.int8 and set(np.unique(clicks)) <= {0, 1}, (
            f"{f.name}: {where} info['clicks'] must be a ({k},) int8 array of 0/1 (one per position), got shape "
            f"{clicks.shape}, dtype {clicks.dtype}")
        assert examined.shape == (k,) and examined.dtype == np.bool_ and not np.any(clicks & ~examined), (
            f"{f.name}: {where} info['examined'] must be a ({k},) bool array covering every clicked position")
        for key in ("expected_reward", "optimal_expected_reward", "regret"):
            _check_scalar(f, info, key, "f", where)
        best = info["optimal_action"]
        assert (best.shape == (k,) and best.dtype.kind in "iu" and len(np.unique(best)) == k
                and 0 <= best.min() and best.max() < big_l), (
            f"{f.name}: {where} optimal_action {best!r} must be a ({k},) integer list of distinct items in [0, {big_l})")
        gap = info["optimal_expected_reward"] - info["expected_reward"]
        assert gap >= -1e-12, (
            f"{f.name}: {where} the list shown has expected reward {info['expected_reward']}, above the optimal "
            f"{info['optimal_expected_reward']}: optimal_action must be a best list (check position_weights)")
        assert info["regret"] >= 0 and abs(info["regret"] - max(gap, 0.0)) <= 1e-12, (
            f"{f.name}: {where} regret {info['regret']} is not max(optimal_expected_reward - expected_reward, 0) = "
            f"{max(gap, 0.0)}")
    clone = pickle.loads(pickle.dumps(env))
    *_, clone_info = clone.step(_first_action(env, info))
    *_, info = env.step(clone_info["optimal_action"])
    assert info["regret"] == 0.0, (
        f"{f.name}: playing the round's optimal_action cost regret {info['regret']}: optimal_action must be a list "
        "of maximal expected reward")


def _assert_sub_info(f: EnvFactory, vec_info: dict, i: int, single_info: dict, where: str, fix: str) -> None:
    """Sub-env i of a vector env's info (Gymnasium's layout: `key` and its `_key` mask) equals a single env's."""
    for key in single_info:
        assert key in vec_info and np.array_equal(vec_info[key][i], single_info[key]) and vec_info[f"_{key}"][i], (
            f"{f.name}: {where}: the vector env's info[{key!r}] of sub-env {i} differs from the single env's: {fix}")


def check_vector_env(f: EnvFactory, n: int = 3, steps: int = 12, horizon: int = 5) -> None:
    """The native vector env equals n single envs seeded seed + i, with Gymnasium's next-step autoreset."""
    if f.make_vec is None:
        if not _is_replay(f.make()):
            warnings.warn(
                f"{f.name} has no native vector env, so gym.make_vec(..., vectorization_mode='vector_entry_point') "
                "fails and ctxbandits run plays its seeds one env at a time, without batched agents; for a "
                "CtxBanditEnv register it with vector_entry_point=vector_env(MyEnv, __name__) "
                "(gym_ctxbandits.envs.core), or pass check_env the class itself to check the one the core builds",
                UserWarning, stacklevel=2)
        return
    singles = [f.make(max_episode_steps=horizon) for _ in range(n)]
    vec = f.make_vec(n, max_episode_steps=horizon)
    obs, info = vec.reset(seed=7)
    assert obs.shape == (n, *singles[0].observation_space.shape) and vec.observation_space.contains(obs), (
        f"{f.name}: the vector env's first observation has shape {obs.shape} or lies outside its space")
    firsts = [s.reset(seed=7 + i) for i, s in enumerate(singles)]
    fix = "the family's round_arrays must treat the N instances of its batch independently"
    for i, (o, inf) in enumerate(firsts):
        assert np.array_equal(obs[i], o), (
            f"{f.name}: vector sub-env {i} of reset(seed=7) differs from a single env reset(seed={7 + i}): {fix}")
        _assert_sub_info(f, info, i, inf, "reset", fix)
    infos = [inf for _, inf in firsts]
    rng = np.random.default_rng(0)
    single_done = np.zeros(n, bool)
    for t in range(steps):
        if _is_ranking(singles[0]):
            actions = np.stack([_random_action(s, infos[i], rng) for i, s in enumerate(singles)])
        else:
            actions = np.array([rng.choice(_available(infos[i], singles[i].action_space.n)) for i in range(n)])
        obs, rewards, terminated, truncated, info = vec.step(actions)
        for i, s in enumerate(singles):
            if single_done[i]:
                # Next-step autoreset: the vector env restarted; the single env does it by hand.
                o, infos[i] = s.reset()
                assert rewards[i] == 0 and not truncated[i], (
                    f"{f.name}: step {t}: the autoreset step of sub-env {i} must give reward 0 and truncated=False")
                _assert_sub_info(f, info, i, infos[i], f"step {t} (autoreset)", fix)
                single_done[i] = False
            else:
                o, r, term, trunc, infos[i] = s.step(actions[i] if _is_ranking(s) else int(actions[i]))
                assert rewards[i] == r and truncated[i] == trunc and not terminated[i], (
                    f"{f.name}: step {t}: vector sub-env {i} gave reward {rewards[i]}, truncated {truncated[i]}; the "
                    f"single env gave {r}, {trunc}: {fix}")
                _assert_sub_info(f, info, i, infos[i], f"step {t}", fix)
                single_done[i] = trunc
            assert np.array_equal(obs[i], o), f"{f.name}: step {t}: vector sub-env {i}'s observation differs: {fix}"
        if t == horizon - 1:
            assert truncated.all(), f"{f.name}: the vector env did not truncate at max_episode_steps={horizon}"


def check_ranking(f: EnvFactory) -> None:
    """For a ranking env (skipped for a one-arm env): the action space is MultiDiscrete([L] * K); a repeated
    item, an item out of range, a list of the wrong length and non-integer items are refused with an error;
    and common random numbers: two envs of one seed shown different lists with the same top item see the
    same user at the top (clicks and examination of position 0), and draw as many random numbers whatever
    the lists, so that they continue identically once they play the same lists."""
    env = f.make()
    if not _is_ranking(env):
        return
    model = env.unwrapped
    big_l, k = model.num_items, model.num_positions
    space = env.action_space
    assert isinstance(space, gym.spaces.MultiDiscrete) and np.array_equal(space.nvec, [big_l] * k), (
        f"{f.name}: a ranking env's action space must be MultiDiscrete([{big_l}] * {k}) (RankingSpace), got {space}")
    env.reset(seed=0)
    good = np.arange(k)
    bad = {"a repeated item": np.r_[good[:-1], good[0]] if k > 1 else None, "an item out of range": np.r_[good[:-1], big_l],
           "a list of the wrong length": np.arange(k + 1) if k < big_l else np.arange(k - 1),
           "non-integer items": good.astype(float)}
    for what, action in bad.items():
        if action is None or len(action) == 0:
            continue
        try:
            env.step(action)
        except (TypeError, ValueError):
            continue
        raise AssertionError(f"{f.name}: step({action.tolist()}) with {what} was accepted: refuse it with a "
                             "ValueError/TypeError naming the problem (envs.ranking.check_ranking does)")
    a, b = f.make(), f.make()
    a.reset(seed=11)
    b.reset(seed=11)
    rng = np.random.default_rng(2)
    for t in range(40):
        first = rng.permutation(big_l)[:k]
        other = np.r_[first[:1], rng.permutation(np.setdiff1d(np.arange(big_l), first[:1]))[: k - 1]]
        info_a, info_b = a.step(first)[4], b.step(other)[4]
        assert info_a["examined"][0] == info_b["examined"][0] and info_a["clicks"][0] == info_b["clicks"][0], (
            f"{f.name}: step {t}: two envs of seed 11 with the same top item {first[0]} saw different users at the "
            "top: draw the round's uniforms per item and per position, whatever the list (common random numbers)")
    for t in range(10):
        x, y = a.step(good), b.step(good)
        assert x[1] == y[1] and np.array_equal(x[4]["clicks"], y[4]["clicks"]), (
            f"{f.name}: after different lists, two envs of seed 11 playing the same list differ at step {t}: draw "
            "the same number of random numbers every round whatever the list (common random numbers)")


def check_instance_seed(f: EnvFactory) -> None:
    """`instance_seed` fixes the instance, not the rounds and noise; without it the instance is drawn from
    the episode seed, unless the env declares it given (`random_instance = False`)."""
    probe = f.make().unwrapped
    probe.reset(seed=0)
    if not (hasattr(probe, "instance_seed") and hasattr(probe, "instance")):
        return

    def run(seed, **extra):
        env = f.make(**extra)
        obs, info = env.reset(seed=seed)
        instance = env.unwrapped.instance
        draws = []
        for _ in range(20):  # the arms shown, the contexts and the reward noise: the episode seed's part
            obs, reward, _, _, info = env.step(_first_action(env, info))
            draws.append((obs.tobytes(), reward))
        return instance, draws

    (fixed_a, draws_a), (fixed_b, draws_b) = run(1, instance_seed=5), run(2, instance_seed=5)
    assert not _instances_differ(fixed_a, fixed_b), (
        f"{f.name}: with instance_seed=5, reset(seed=1) and reset(seed=2) gave different instances: draw the "
        "instance from np.random.default_rng(instance_seed) when it is set (CtxBanditEnv does)")
    assert draws_a != draws_b, (
        f"{f.name}: with instance_seed=5, seeds 1 and 2 gave the same rounds and rewards: the rounds and the noise "
        "must still come from the episode seed (self.np_random)")
    (free_a, _), (free_b, _) = run(1), run(2)
    assert not _instances_differ(free_a, run(1)[0]), (
        f"{f.name}: reset(seed=1) twice gave two different instances: draw the instance only from the generator "
        "draw_instance is given")
    if getattr(probe, "random_instance", True):
        assert _instances_differ(free_a, free_b), (
            f"{f.name}: reset(seed=1) and reset(seed=2) gave the same instance: draw it at reset from the generator "
            "draw_instance is given, not in __init__ or from a fixed seed; if it is given rather than drawn (a "
            "hand-built action set, a dataset), set random_instance = False on the class")
    else:
        assert not _instances_differ(free_a, free_b), (
            f"{f.name}: declares random_instance = False (a given instance) but its instance changes with the "
            "episode seed: remove the declaration")


CHECKS: tuple[Callable[[EnvFactory], None], ...] = (
    check_gymnasium, check_determinism, check_pickle, check_info, check_vector_env, check_instance_seed, check_ranking,
)


def check_env(id_or_env, *, info_keys=(), **kwargs) -> None:
    """Run every check of `CHECKS` on a registered id or an env class (see the module docstring);
    `kwargs` are the env's, `info_keys` the documented step-info keys beyond the contract."""
    f = as_factory(id_or_env, info_keys=info_keys, **kwargs)
    for check in CHECKS:
        check(f)
