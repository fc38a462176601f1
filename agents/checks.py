"""Conformance suite that every registered agent passes (in the spirit of river's checks and
scikit-learn's `parametrize_with_checks`).

    from agents.checks import check_agent
    check_agent("LinUCB")                       # all checks, single mode and (if supported) batched
    check_agent(lambda **kw: MyAgent(lr=0.1, **kw))

`name_or_factory` is a registered name or a callable returning a fresh agent from keyword
arguments (it must accept `seed=`). Each check takes `(factory, batched)` and raises
AssertionError naming the agent and the problem. `all_checks(REGISTRY)` yields one
`(name, check, batched)` triple per test, for pytest parametrization. Problems are tiny (K = 4
arms, d = 3 features, a few dozen rounds) so the whole suite stays fast. Rewards are Bernoulli
draws in {0, 1}, valid input for linear and generalised linear agents alike.

Each family's incremental statistics are checked against their closed form in its own tests
(tests/agents/test_linear.py, test_ensemble.py, ...): that part cannot be generic.

Ranking agents (class attribute `kind = "ranking"`, issue 50) get their own checks, RANKING_CHECKS
(`all_checks` and `check_agent` dispatch on the kind), on a small synthetic cascade problem: L = 6
one-hot items, lists of K = 3, 12 rounds; each agent is given num_positions = K, and kappas and
a horizon where it takes them.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
import pickle
from typing import Any, Callable, Iterator

import numpy as np

from agents.base import REGISTRY, BaseAgent, make
from agents.params import declared, keyword_parameters

K, D, N, ROUNDS = 4, 3, 3, 24
# rounds of each check's problem: ROUNDS, or check_agent(..., rounds=R) for an agent with a longer
# memory (a window, a buffer, a warm-up) that a few dozen rounds do not fill
_rounds = contextvars.ContextVar("rounds", default=ROUNDS)
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset, np.number)


def as_factory(name_or_factory) -> Callable[..., Any]:
    """A registered name becomes `lambda **kw: make(name, **kw)` (named after it); callables pass."""
    if not isinstance(name_or_factory, str):
        return name_or_factory

    def factory(**kwargs):
        return make(name_or_factory, **kwargs)

    factory.__name__ = name_or_factory
    return factory


def _name(factory) -> str:
    return getattr(factory, "__name__", repr(factory))


class _Problem:
    """Fixed random inputs: per-round features (K, d) or (N, K, d), and a reward for every arm.
    Batched, instance 0 sees the same K arms every round and the others fresh arms."""

    def __init__(self, batched: bool, rounds: int | None = None, seed: int = 12345):
        rng = np.random.default_rng(seed)
        rounds = _rounds.get() if rounds is None else rounds
        shape = (rounds, N, K, D) if batched else (rounds, K, D)
        self.obs = rng.normal(size=shape) / np.sqrt(D)
        if batched:      # instance 0 keeps its arms, the others get fresh ones: their histories differ in kind
            self.obs[:, 0] = self.obs[0, 0]
        theta = rng.normal(size=D)
        p = 1.0 / (1.0 + np.exp(-(self.obs @ theta)))
        self.rewards = (rng.random(p.shape) < p).astype(float)
        self.batched = batched

    def reward(self, t: int, action):
        if self.batched:
            return self.rewards[t][np.arange(N), action]
        return float(self.rewards[t][action])


def _run(agent, problem: _Problem, start: int = 0, stop: int | None = None) -> list:
    """Drive the agent through rounds [start, stop); return the actions as plain lists/ints."""
    actions = []
    for t in range(start, len(problem.obs) if stop is None else stop):
        a = agent.act(problem.obs[t])
        agent.observe(problem.obs[t], a, problem.reward(t, a))
        actions.append(np.asarray(a).tolist())
    return actions


def _batched_capable(factory) -> bool:
    return bool(getattr(factory(seed=0), "batched", False))


# -- the checks ---------------------------------------------------------------------------------
def check_valid_actions(factory, batched: bool = False) -> None:
    """act returns an int in [0, K) (batched: an (N,) int array of such ints)."""
    problem, agent, name = _Problem(batched), factory(seed=0), _name(factory)
    for t in range(len(problem.obs)):
        a = agent.act(problem.obs[t])
        if batched:
            assert isinstance(a, np.ndarray) and a.shape == (N,) and a.dtype.kind in "iu", (
                f"{name}: batched act must return an (N,) int array, got {type(a).__name__} {np.shape(a)}")
            assert ((0 <= a) & (a < K)).all(), f"{name}: actions {a} out of range [0, {K})"
        else:
            assert isinstance(a, (int, np.integer)) and not isinstance(a, bool), (
                f"{name}: act must return an int, got {type(a).__name__}")
            assert 0 <= a < K, f"{name}: action {a} out of range [0, {K})"
        agent.observe(problem.obs[t], a, problem.reward(t, a))


def check_seeded_determinism(factory, batched: bool = False) -> None:
    """Same seed and same inputs give the same actions."""
    problem = _Problem(batched)
    first, second = _run(factory(seed=7), problem), _run(factory(seed=7), problem)
    assert first == second, f"{_name(factory)}: two agents with seed=7 acted differently on the same inputs"


def check_inputs_not_mutated(factory, batched: bool = False) -> None:
    """obs, action and reward arrays are left unchanged, and read-only obs arrays are accepted."""
    problem, name = _Problem(batched), _name(factory)
    agent = factory(seed=0)
    for t in range(len(problem.obs)):
        obs = problem.obs[t].copy()
        a = agent.act(obs)
        a_copy = np.array(a, copy=True)
        r = problem.reward(t, a)
        r_copy = np.array(r, copy=True)
        agent.observe(obs, a, r)
        assert np.array_equal(obs, problem.obs[t]), f"{name}: obs was modified"
        assert np.array_equal(np.asarray(a), a_copy), f"{name}: the returned action changed after observe"
        assert np.array_equal(np.asarray(r), r_copy), f"{name}: the reward array was modified"
    agent = factory(seed=0)
    for t in range(len(problem.obs)):
        obs = problem.obs[t].copy()
        obs.setflags(write=False)   # envs may return read-only arrays
        try:
            a = agent.act(obs)
            agent.observe(obs, a, problem.reward(t, a))
        except ValueError as err:
            raise AssertionError(f"{name}: a read-only obs array was rejected: {err}") from err


def check_copy_and_pickle(factory, batched: bool = False) -> None:
    """deepcopy and pickle mid-run reproduce the same future actions."""
    problem = _Problem(batched)
    agent = factory(seed=3)
    half = len(problem.obs) // 2
    _run(agent, problem, 0, half)
    clones = {"deepcopy": copy.deepcopy(agent), "pickle": pickle.loads(pickle.dumps(agent))}
    expected = _run(agent, problem, half)
    for how, clone in clones.items():
        assert _run(clone, problem, half) == expected, f"{_name(factory)}: {how} mid-run changed the future actions"


def check_reset(factory, batched: bool = False) -> None:
    """reset() returns the agent to its initial behaviour (same actions on the same inputs)."""
    problem = _Problem(batched)
    agent = factory(seed=5)
    first = _run(agent, problem)
    agent.reset()
    assert _run(agent, problem) == first, f"{_name(factory)}: actions after reset() differ from a fresh run"


def check_bad_inputs(factory, batched: bool = False) -> None:
    """NaN/inf (or overflowing, 1e308) rewards, NaN obs, wrong obs shapes and out-of-range actions raise a
    clear ValueError."""
    problem = _Problem(batched)
    agent = factory(seed=0)
    _run(agent, problem, 0, 3)
    obs, name = problem.obs[3], _name(factory)
    a = agent.act(obs)

    def expect(what: str, words: tuple[str, ...], call: Callable[[], Any]) -> None:
        try:
            call()
        except ValueError as err:
            msg = str(err).lower()
            assert any(w in msg for w in words), f"{name}: ValueError for {what} does not name the problem: {err}"
        else:
            raise AssertionError(f"{name}: {what} was accepted; expected a ValueError")

    for bad in (np.nan, np.inf, -np.inf, 1e308):       # 1e308 is finite, but its square overflows the statistics
        reward = np.where(np.arange(N) == 1, bad, 0.0) if batched else bad
        expect(f"reward {bad}", ("reward",), lambda: agent.observe(obs, a, reward))
    bad_action = np.full(N, K) if batched else K
    expect("an out-of-range action", ("action",), lambda: agent.observe(obs, bad_action, problem.reward(3, a)))
    huge = obs.copy()
    huge[..., :, 0] = 1e200                              # finite, but its square overflows the statistics
    expect("obs with features of 1e200", ("obs",), lambda: agent.observe(huge, a, problem.reward(3, a)))
    nan_obs = obs.copy()
    nan_obs[..., 0, 0] = np.nan
    expect("obs with NaN", ("obs", "nan", "finite"), lambda: agent.act(nan_obs))
    for wrong in (obs[..., 0], obs[..., :-1], obs[None]):
        expect(f"obs of shape {wrong.shape}", ("obs", "shape", "dim"), lambda: agent.act(wrong))


def check_errors_leave_state(factory, batched: bool = False) -> None:
    """A rejected call changes nothing: the agent then acts exactly like a twin that never saw it."""
    problem = _Problem(batched)
    agent, twin = factory(seed=2), factory(seed=2)
    half = len(problem.obs) // 2
    _run(agent, problem, 0, half)
    _run(twin, problem, 0, half)
    obs = problem.obs[half]
    a = agent.act(obs)
    twin.act(obs)
    for bad_call in (lambda: agent.observe(obs, a, np.full(N, np.nan) if batched else np.nan),
                     lambda: agent.act(obs[..., :-1])):
        try:
            bad_call()
        except ValueError:
            pass
    agent.observe(obs, a, problem.reward(half, a))
    twin.observe(obs, a, problem.reward(half, a))
    assert _run(agent, problem, half + 1) == _run(twin, problem, half + 1), (
        f"{_name(factory)}: a rejected call changed the agent's later actions")


def check_constructor(factory, batched: bool = False) -> None:
    """A docstring; keyword hyperparameters with immutable defaults and a `seed`, stored unmodified
    (and, for an agent on `agents.BaseAgent`, declared in its `params`, so they are validated: an
    undeclared one is a DeprecationWarning in 0.2 and 0.3, an error from 0.4)."""
    agent = factory(seed=11)
    cls, name = type(agent), _name(factory)
    assert (cls.__doc__ or "").strip(), f"{name}: {cls.__name__} has no docstring"
    params = keyword_parameters(cls)
    assert "seed" in [p.name for p in params], f"{name}: the constructor takes no `seed` argument"
    assert agent.seed == 11, f"{name}: seed=11 not stored unmodified as .seed"
    fresh = cls()
    for p in params:
        assert p.default is not p.empty, f"{name}: hyperparameter {p.name!r} has no default"
        assert isinstance(p.default, _IMMUTABLE), (
            f"{name}: default of {p.name!r} is mutable ({type(p.default).__name__})")
        stored = getattr(fresh, p.name, AssertionError)
        assert stored is not AssertionError, f"{name}: hyperparameter {p.name!r} is not stored as an attribute"
        assert stored is p.default or stored == p.default, (
            f"{name}: hyperparameter {p.name!r} stored as {stored!r}, not as given ({p.default!r})")
    if isinstance(agent, BaseAgent):          # the one base validates what the class declares
        undeclared = [p.name for p in params if p.name != "seed" and p.name not in declared(cls)]
        assert not undeclared, (
            f"{name}: hyperparameters {undeclared} are not declared in {cls.__name__}.params, so nothing checks "
            f"their values; declare each with its rule, e.g. params = {{{undeclared[0]!r}: Real(gt=0)}} (the rules: "
            "agents.params). Required since 0.4.0 (a warning in 0.2.0 and 0.3.0)")


def check_plain_inputs(factory, batched: bool = False) -> None:
    """Unnormalised features x ~ N(0, I_8) on K = 10 arms and rewards N(0, 1) for 40 rounds: valid
    actions, no error (a user's data is rarely scaled to the unit ball the papers assume)."""
    rng, name = np.random.default_rng(99), _name(factory)
    agent = factory(seed=0)
    for t in range(40):
        obs = rng.normal(size=(N, 10, 8) if batched else (10, 8))
        try:
            a = agent.act(obs)
            agent.observe(obs, a, rng.normal(size=N) if batched else float(rng.normal()))
        except (ValueError, FloatingPointError) as err:
            raise AssertionError(f"{name}: round {t} of unnormalised N(0, I) features failed: {err}") from err


def check_batched_equals_singles(factory, batched: bool = False) -> None:
    """Batched mode: an agent seeded [s_1..s_N] on obs (N, K, d) acts, instance by instance, exactly
    as N single agents seeded s_i on their (K, d) slices (what lets the run loop batch seeds)."""
    if not batched:
        return
    problem, name, seeds = _Problem(True), _name(factory), [3, 11, 4]
    batch, singles = factory(seed=seeds), [factory(seed=s) for s in seeds]
    for t in range(len(problem.obs)):
        actions = batch.act(problem.obs[t])
        alone = [agent.act(problem.obs[t][i]) for i, agent in enumerate(singles)]
        assert np.asarray(actions).tolist() == alone, (
            f"{name}: round {t}, the batched agent chose {np.asarray(actions).tolist()} but single agents seeded "
            f"{seeds} chose {alone}")
        rewards = problem.reward(t, actions)
        batch.observe(problem.obs[t], actions, rewards)
        for i, agent in enumerate(singles):
            agent.observe(problem.obs[t][i], int(actions[i]), float(rewards[i]))


# check_action_probs: Monte-Carlo copies per estimate, and the largest difference allowed between two
# estimates of one probability (4.4 standard deviations of the difference of two shares of 80 draws).
PROBS_DRAWS, PROBS_MARGIN = 80, 0.35


def _probs(agent, obs, draws: int) -> np.ndarray:
    """agent.action_probs(obs), with `draws` Monte-Carlo copies where the agent takes the argument."""
    if "draws" in inspect.signature(agent.action_probs).parameters:
        return np.asarray(agent.action_probs(obs, draws=draws))
    return np.asarray(agent.action_probs(obs))


def _sampled_by_base(agent, obs) -> bool:
    """Whether agent.action_probs(obs) is BaseAgent's Monte-Carlo estimate (no closed form)."""
    return (type(agent).action_probs is BaseAgent.action_probs and agent.n_ is not None
            and agent._probs(agent._check_obs(obs)) is None)


def check_action_probs(factory, batched: bool = False) -> None:
    """`action_probs(obs)` is the distribution of the next action, for off-policy evaluation:
    - every round, from the first obs on, it is non-negative, sums to 1 and has shape (K,) or (N, K),
      and asking for it changes none of the agent's actions (a twin that is never asked acts the same);
    - at two rounds it matches, within PROBS_MARGIN, the frequencies of the arms that `act` picks on
      PROBS_DRAWS copies of the agent with independently reseeded streams (agents.BaseAgent's
      `_sampled_probs`); the obs of the second repeats the arm each instance would pick in a second
      slot, so an index policy must split the tie evenly. An agent without `_sampled_probs` must
      instead give positive probability to the action a copy of it picks. An agent whose
      action_probs is agents.BaseAgent's own Monte-Carlo estimate (no closed-form `_probs`) skips
      the comparison: its probabilities are those frequencies by definition, and comparing two
      samples of them would test the library's sampler (tests/agents/test_action_probs.py does),
      not the agent, at the price of 320 copies.
    """
    problem, name = _Problem(batched), _name(factory)
    agent, twin = factory(seed=4), factory(seed=4)
    assert hasattr(agent, "action_probs"), f"{name}: no action_probs(obs) (agents.BaseAgent provides one)"
    shape, rows = ((N, K) if batched else (K,)), np.arange(N if batched else 1)
    third = len(problem.obs) // 3
    for t in range(len(problem.obs)):
        obs = problem.obs[t]
        if t in (third, 2 * third) and not _sampled_by_base(agent, obs):
            if t > third:
                pick = np.reshape(copy.deepcopy(agent).act(obs), -1)
                obs = obs.copy()
                arms = obs.reshape(-1, K, D)                         # a view: (instances, K, d)
                arms[rows, (pick + 1) % K] = arms[rows, pick]        # the arm it would pick, twice
            p = _probs(agent, obs, PROBS_DRAWS)
            if hasattr(agent, "_sampled_probs"):
                freq = agent._sampled_probs(obs, PROBS_DRAWS, salt=1).reshape(shape)
                assert np.abs(p - freq).max() <= PROBS_MARGIN, (
                    f"{name}: round {t}, action_probs {np.round(p, 2).tolist()} but act's frequencies on "
                    f"{PROBS_DRAWS} reseeded copies {np.round(freq, 2).tolist()}")
            else:
                chosen = np.reshape(copy.deepcopy(agent).act(obs), -1)
                assert (p.reshape(-1, K)[rows, chosen] > 0).all(), f"{name}: round {t}, act chose an arm of probability 0"
        else:
            p = _probs(agent, obs, 4)
        assert p.shape == shape, f"{name}: action_probs has shape {p.shape}, expected {shape}"
        assert (p >= 0).all() and np.allclose(p.sum(axis=-1), 1.0), (
            f"{name}: round {t}, action_probs {np.round(p, 3).tolist()} is not a distribution")
        a, b = agent.act(obs), twin.act(obs)
        assert np.asarray(a).tolist() == np.asarray(b).tolist(), (
            f"{name}: round {t}, calling action_probs changed the action ({np.asarray(a).tolist()} instead of "
            f"{np.asarray(b).tolist()})")
        r = problem.reward(t, a)
        agent.observe(obs, a, r)
        twin.observe(obs, b, r)


# -- ranking agents (kind "ranking", issue 50) ----------------------------------------------------
RL, RK = 6, 3         # items and positions of the ranking checks' cascade problem


class _RankProblem:
    """A cascade problem: one-hot obs (L, L) (batched (N, L, L): instance 0's, the others' fresh
    features, which agents that read items by row index ignore), and every round's attraction draws of the
    L items; the clicks of a list are the cascade's (the first attractive position). Half the
    K-armed checks' rounds (12 by default): a ranking round teaches K positions."""

    def __init__(self, batched: bool, rounds: int | None = None, seed: int = 12345):
        rng = np.random.default_rng(seed)
        rounds = max(6, _rounds.get() // 2) if rounds is None else rounds
        self.batched = batched
        self.obs = np.broadcast_to(np.eye(RL), (rounds, N, RL, RL) if batched else (rounds, RL, RL)).copy()
        if batched:      # instance 0 sees one-hot ids, the others fresh features: their histories differ in kind
            self.obs[:, 1:] = rng.normal(size=(rounds, N - 1, RL, RL)) / np.sqrt(RL)
        w = np.linspace(0.6, 0.1, RL)
        self.attract = rng.random((rounds, N if batched else 1, RL)) < w

    def clicks(self, t: int, ranking) -> np.ndarray:
        A = np.reshape(ranking, (-1, RK))
        seen = np.take_along_axis(self.attract[t], A, axis=1)
        first = seen & (np.cumsum(seen, axis=1) == 1)
        C = first.astype(np.int8)
        return C if self.batched else C[0]


def _ranking_factory(factory) -> Callable[..., Any]:
    """The factory with the problem's num_positions, and kappas and a horizon where the agent takes them."""
    names = {p.name for p in keyword_parameters(type(factory(seed=0)))}
    extra: dict = {"num_positions": RK}
    if "kappas" in names:
        extra["kappas"] = (1.0, 0.7, 0.4)
    if "horizon" in names:
        extra["horizon"] = 100

    def made(**kwargs):
        return factory(**{**extra, **kwargs})

    made.__name__ = _name(factory)
    return made


def _rank_run(agent, problem: _RankProblem, start: int = 0, stop: int | None = None) -> list:
    lists = []
    for t in range(start, len(problem.obs) if stop is None else stop):
        A = agent.act(problem.obs[t])
        agent.observe(problem.obs[t], A, problem.clicks(t, A))
        lists.append(np.asarray(A).tolist())
    return lists


def check_ranking_lists(factory, batched: bool = False) -> None:
    """act returns K distinct items in [0, L): a (K,) int array (batched: (N, K))."""
    factory, problem, name = _ranking_factory(factory), _RankProblem(batched), _name(factory)
    agent = factory(seed=0)
    shape = (N, RK) if batched else (RK,)
    for t in range(len(problem.obs)):
        A = agent.act(problem.obs[t])
        assert isinstance(A, np.ndarray) and A.shape == shape and A.dtype.kind in "iu", (
            f"{name}: act must return a {shape} int array, got {type(A).__name__} {np.shape(A)}")
        rows = A.reshape(-1, RK)
        assert ((0 <= rows) & (rows < RL)).all(), f"{name}: round {t}, items {A.tolist()} out of range [0, {RL})"
        assert all(len(set(r)) == RK for r in rows.tolist()), f"{name}: round {t}, list {A.tolist()} repeats an item"
        agent.observe(problem.obs[t], A, problem.clicks(t, A))


def check_ranking_determinism(factory, batched: bool = False) -> None:
    """Same seed and same clicks give the same lists."""
    factory, problem = _ranking_factory(factory), _RankProblem(batched)
    assert _rank_run(factory(seed=7), problem) == _rank_run(factory(seed=7), problem), (
        f"{_name(factory)}: two agents with seed=7 ranked differently on the same inputs")


def check_ranking_inputs_not_mutated(factory, batched: bool = False) -> None:
    """obs, the list and the clicks are left unchanged, and read-only obs are accepted."""
    factory, problem, name = _ranking_factory(factory), _RankProblem(batched), _name(factory)
    agent = factory(seed=0)
    for t in range(len(problem.obs)):
        obs = problem.obs[t].copy()
        obs.setflags(write=False)
        A = agent.act(obs)
        A_copy, C = A.copy(), problem.clicks(t, A)
        C_copy = C.copy()
        agent.observe(obs, A, C)
        assert np.array_equal(obs, problem.obs[t]), f"{name}: obs was modified"
        assert np.array_equal(A, A_copy), f"{name}: the returned list changed after observe"
        assert np.array_equal(C, C_copy), f"{name}: the clicks array was modified"


def check_ranking_copy_and_pickle(factory, batched: bool = False) -> None:
    """deepcopy and pickle mid-run reproduce the same future lists."""
    factory, problem = _ranking_factory(factory), _RankProblem(batched)
    agent = factory(seed=3)
    half = len(problem.obs) // 2
    _rank_run(agent, problem, 0, half)
    clones = {"deepcopy": copy.deepcopy(agent), "pickle": pickle.loads(pickle.dumps(agent))}
    expected = _rank_run(agent, problem, half)
    for how, clone in clones.items():
        assert _rank_run(clone, problem, half) == expected, f"{_name(factory)}: {how} mid-run changed the future lists"


def check_ranking_reset(factory, batched: bool = False) -> None:
    """reset() returns the agent to its initial behaviour."""
    factory, problem = _ranking_factory(factory), _RankProblem(batched)
    agent = factory(seed=5)
    first = _rank_run(agent, problem)
    agent.reset()
    assert _rank_run(agent, problem) == first, f"{_name(factory)}: lists after reset() differ from a fresh run"


def check_ranking_bad_inputs(factory, batched: bool = False) -> None:
    """Clicks of the wrong shape or not 0/1, a list that repeats an item, is out of range or of the
    wrong length, NaN obs and obs of the wrong shape raise a ValueError naming the problem; a
    rejected call changes nothing (the agent then ranks as a twin that never saw it)."""
    factory, problem, name = _ranking_factory(factory), _RankProblem(batched), _name(factory)
    agent, twin = factory(seed=0), factory(seed=0)
    _rank_run(agent, problem, 0, 3)
    _rank_run(twin, problem, 0, 3)
    obs = problem.obs[3]
    A, C = agent.act(obs), problem.clicks(3, twin.act(obs))

    def expect(what: str, words: tuple[str, ...], call: Callable[[], Any]) -> None:
        try:
            call()
        except ValueError as err:
            assert any(w in str(err).lower() for w in words), f"{name}: ValueError for {what} does not name it: {err}"
        else:
            raise AssertionError(f"{name}: {what} was accepted; expected a ValueError")

    repeat, far = A.copy(), A.copy()
    repeat[..., 1] = repeat[..., 0]
    far[..., 0] = RL
    for what, bad in (("clicks of the wrong shape", C[..., :-1]), ("clicks of 2", C * 0 + 2),
                      ("clicks of 0.5", C * 0 + 0.5), ("NaN clicks", C * np.nan)):
        expect(what, ("click",), lambda: agent.observe(obs, A, bad))
    for what, bad in (("a list that repeats an item", repeat), ("an item out of range", far),
                      ("a list of the wrong length", A[..., :-1])):
        expect(what, ("ranking", "item", "list"), lambda: agent.observe(obs, bad, C))
    nan_obs = obs.copy()
    nan_obs[..., 0, 0] = np.nan
    expect("obs with NaN", ("obs", "nan", "finite"), lambda: agent.act(nan_obs))
    for wrong in (obs[..., 0], obs[..., :-1, :], obs[None]):
        expect(f"obs of shape {wrong.shape}", ("obs", "shape", "items"), lambda: agent.act(wrong))
    agent.observe(obs, A, C)
    twin.observe(obs, A, C)
    assert _rank_run(agent, problem, 4) == _rank_run(twin, problem, 4), (
        f"{name}: a rejected call changed the agent's later lists")


def check_ranking_batched_equals_singles(factory, batched: bool = False) -> None:
    """Batched mode: an agent seeded [s_1..s_N] gives instance i exactly the lists of a single agent
    seeded s_i fed instance i's obs and clicks."""
    if not batched:
        return
    factory, problem, name, seeds = _ranking_factory(factory), _RankProblem(True), _name(factory), [3, 11, 4]
    batch, singles = factory(seed=seeds), [factory(seed=s) for s in seeds]
    for t in range(len(problem.obs)):
        A = batch.act(problem.obs[t])
        alone = [agent.act(problem.obs[t][i]).tolist() for i, agent in enumerate(singles)]
        assert A.tolist() == alone, (f"{name}: round {t}, the batched agent ranked {A.tolist()} but single agents "
                                     f"seeded {seeds} ranked {alone}")
        C = problem.clicks(t, A)
        batch.observe(problem.obs[t], A, C)
        for i, agent in enumerate(singles):
            agent.observe(problem.obs[t][i], A[i], C[i])


def check_ranking_action_probs(factory, batched: bool = False) -> None:
    """A ranking agent that offers `action_probs(obs)` gives a distribution over the L items every
    round ((L,) or (N, L), non-negative, summing to 1); offering none is allowed."""
    factory, problem, name = _ranking_factory(factory), _RankProblem(batched), _name(factory)
    agent = factory(seed=4)
    if not hasattr(agent, "action_probs"):
        return
    for t in range(len(problem.obs)):
        p = np.asarray(agent.action_probs(problem.obs[t]))
        assert p.shape == problem.obs[t].shape[:-1] and (p >= 0).all() and np.allclose(p.sum(axis=-1), 1.0), (
            f"{name}: round {t}, action_probs {np.round(p, 3).tolist()} is not a distribution over the items")
        A = agent.act(problem.obs[t])
        agent.observe(problem.obs[t], A, problem.clicks(t, A))


RANKING_CHECKS: tuple[Callable[..., None], ...] = (
    check_ranking_lists, check_ranking_determinism, check_ranking_inputs_not_mutated, check_ranking_copy_and_pickle,
    check_ranking_reset, check_ranking_bad_inputs, check_constructor, check_ranking_batched_equals_singles,
    check_ranking_action_probs,
)


CHECKS: tuple[Callable[..., None], ...] = (
    check_valid_actions, check_seeded_determinism, check_inputs_not_mutated, check_copy_and_pickle,
    check_reset, check_bad_inputs, check_errors_leave_state, check_constructor, check_batched_equals_singles,
    check_plain_inputs, check_action_probs,
)
_MODE_FREE = {check_constructor}   # checks that do not depend on single vs batched mode
_BATCHED_ONLY = {check_batched_equals_singles, check_ranking_batched_equals_singles}


def _applies(check, batched: bool) -> bool:
    return not (batched and check in _MODE_FREE) and not (not batched and check in _BATCHED_ONLY)


def _checks_of(kind: str) -> tuple[Callable[..., None], ...]:
    """The checks of an agent of `kind` ("arm", the default, or "ranking")."""
    return RANKING_CHECKS if kind == "ranking" else CHECKS


def all_checks(registry: dict | None = None) -> Iterator[tuple[str, Callable[..., None], bool]]:
    """(agent name, check, batched) for every registered agent, check and supported mode."""
    registry = REGISTRY if registry is None else registry
    for name in sorted(registry):
        modes = (False, True) if _batched_capable(as_factory(name)) else (False,)
        for check in _checks_of(getattr(registry[name], "kind", "arm")):
            for batched in modes:
                if _applies(check, batched):
                    yield name, check, batched


def check_agent(name_or_factory, batched: bool | None = None, rounds: int = ROUNDS) -> None:
    """Run every check; `batched=None` tests single mode and, if the agent supports it, batched.
    `rounds` is the length of each check's run: raise it past an agent's window, buffer or warm-up
    so the checks see the agent after it has filled them."""
    if not (isinstance(rounds, int) and rounds >= 6):
        raise ValueError(f"rounds must be an integer >= 6 (each check splits its run in parts), got {rounds!r}")
    factory = as_factory(name_or_factory)
    modes = (False, True) if _batched_capable(factory) else (False,)
    token = _rounds.set(rounds)
    try:
        for check in _checks_of(getattr(factory(seed=0), "kind", "arm")):
            for mode in modes if batched is None else (batched,):
                if _applies(check, mode):
                    check(factory, mode)
    finally:
        _rounds.reset(token)
