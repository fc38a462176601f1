"""The one-instance round of the linear agents (LinearAgent's `_choose1` / `_scores1` / `_update1`)
equals the batched round bit for bit and rejects bad input with the same errors."""

import copy
import pickle

import numpy as np
import pytest

import agents
from agents.base import argmax_probs
from agents.linear import Greedy, LinearAgent, LinUCB, Softmax

LINEAR = [name for name, entry in agents.REGISTRY.items()
          if getattr(entry, "__module__", "") in ("agents.linear", "agents.linear_ensemble")]


def rounds(seed, n=300, d=10):
    """Rounds of (obs, reward noise): integer features (3 distinct arms, repeated: tied scores), float32 and float64 ones,
    3 to 7 arms; every 50th round has 1,100 arms (the einsum form of the scores)."""
    rng = np.random.default_rng(seed)
    for t in range(n):
        k = 1100 if t % 50 == 49 else 3 + t % 5
        X = (rng.integers(-1, 2, size=(3, d))[rng.integers(3, size=k)] if t % 3 == 0 else
             rng.normal(size=(k, d)).astype(np.float32 if t % 3 == 1 else np.float64))
        yield X, float(rng.normal())


def general(agent):
    """The agent driven through the general (N = 1 batched) code even in single mode."""
    agent._act1 = agent._observe1 = False
    return agent


def _on_copied_streams(agent, f, draws=True):
    """f() with the agent's random streams replaced by a copy for the call (so it draws nothing of its own)."""
    if not draws:
        return f()
    rng = agent.rng_
    agent.rng_ = copy.deepcopy(rng)
    try:
        return f()
    finally:
        agent.rng_ = rng


def state(agent):
    return {k: v for k, v in vars(agent).items() if isinstance(v, np.ndarray)}


def _same_refusal(fast, slow, what: str, call, unchanged: bool) -> None:
    """`call` refuses both agents with the same message; with `unchanged`, `fast`'s state is as before."""
    twin = copy.deepcopy(fast)
    errors = []
    for agent in (fast, slow):
        with pytest.raises(ValueError) as err:
            call(agent)
        errors.append(str(err.value))
    assert errors[0] == errors[1], what
    if unchanged:
        for key, value in state(twin).items():
            np.testing.assert_array_equal(getattr(fast, key), value, err_msg=f"{what}: {key}")


@pytest.mark.parametrize("name", LINEAR)
def test_one_instance_rounds_equal_the_batched_ones(name):
    """A single agent seeded s (fast path), the same agent on the general path, and a batched agent
    seeded [s] on obs[None]: the same arm every round, ties included, and the same state bits."""
    assert type(agents.make(name))._act1 and type(agents.make(name))._observe1, "no one-instance path"
    fast, slow, batched = agents.make(name, seed=3), general(agents.make(name, seed=3)), agents.make(name, seed=[3])
    slow_batched = general(agents.make(name, seed=[3]))     # a batched agent serving one instance takes the hooks too
    ties = 0
    draws = not isinstance(fast, (Greedy, LinUCB))       # scores that draw: computed from copies of the streams
    for t, (X, noise) in enumerate(rounds(3)):
        if t and (not draws or t % 4 == 1) and hasattr(fast, "_scores1"):    # the scores themselves
            scores = _on_copied_streams(batched, lambda: batched._scores(X[None])[0], draws)
            np.testing.assert_array_equal(_on_copied_streams(fast, lambda: fast._scores1(X), draws), scores, strict=True)
            ties += argmax_probs(scores).max() < 1
            if isinstance(fast, Softmax):
                np.testing.assert_array_equal(fast._probs1(X), batched._probs(X[None])[0], strict=True)
        a = fast.act(X)
        assert isinstance(a, int) and slow.act(X) == a
        got, want = batched.act(X[None]), slow_batched.act(X[None])
        np.testing.assert_array_equal(got, want, strict=True)      # values, shape (1,) and dtype
        assert got.tolist() == [a]
        reward = noise + float(X[a].sum())
        fast.observe(X, a, reward)
        slow.observe(X, a, reward)
        batched.observe(X[None], np.array([a]), np.array([reward]))
        slow_batched.observe(X[None], np.array([a]), np.array([reward]))
    assert not fast.index_policy or ties >= 10, ties       # Greedy and LinUCB met ties
    for other in (slow, batched, slow_batched):
        want = state(other)
        assert state(fast).keys() == want.keys()
        for key, value in state(fast).items():
            np.testing.assert_array_equal(value, want[key], err_msg=key, strict=True)
        assert fast.t_ == other.t_ == 300
        for draw in ("random", "standard_normal"):           # the streams in step
            np.testing.assert_array_equal(getattr(copy.deepcopy(fast.rng_), draw)((1, 5)),
                                          getattr(copy.deepcopy(other.rng_), draw)((1, 5)))
        assert copy.deepcopy(fast.rng_).gens[0].integers(10**9) == copy.deepcopy(other.rng_).gens[0].integers(10**9)


def _bad_calls(X, a):
    """(what, call on an agent) for every kind of bad input of a started single agent's round."""
    def with_value(value, row):
        Z = X.copy()
        Z[row, 0] = value
        return Z

    other = 1 - a
    return [
        ("NaN obs", lambda ag: ag.act(with_value(np.nan, other))),
        ("inf obs", lambda ag: ag.act(with_value(np.inf, other))),
        ("-inf obs", lambda ag: ag.act(with_value(-np.inf, other))),
        ("wrong d", lambda ag: ag.act(X[:, :-1])),
        ("3-D obs", lambda ag: ag.act(X[None])),
        ("no arms", lambda ag: ag.act(X[:0])),
        ("1-D obs", lambda ag: ag.act(X[0])),
        ("string obs", lambda ag: ag.act(X.astype(str))),
        ("complex obs", lambda ag: ag.act(X.astype(complex))),
        ("observe wrong d", lambda ag: ag.observe(X[:, :-1], a, 0.0)),
        ("observe 3-D", lambda ag: ag.observe(X[None], a, 0.0)),
        ("action out of range", lambda ag: ag.observe(X, len(X), 0.0)),
        ("negative action", lambda ag: ag.observe(X, -1, 0.0)),
        ("float action", lambda ag: ag.observe(X, 1.0, 0.0)),
        ("array action", lambda ag: ag.observe(X, np.array([a]), 0.0)),
        ("NaN reward", lambda ag: ag.observe(X, a, np.nan)),
        ("inf reward", lambda ag: ag.observe(X, a, -np.inf)),
        ("huge reward", lambda ag: ag.observe(X, a, 1e101)),
        ("string reward", lambda ag: ag.observe(X, a, "x")),
        ("NaN chosen features", lambda ag: ag.observe(with_value(np.nan, a), a, 0.0)),
        ("inf chosen features", lambda ag: ag.observe(with_value(np.inf, a), a, 0.0)),
        ("huge chosen features", lambda ag: ag.observe(with_value(2e100, a), a, 0.0)),
        ("inf float32 features", lambda ag: ag.observe(with_value(np.inf, a).astype(np.float32), a, 0.0)),
    ]


@pytest.mark.parametrize("name", LINEAR)
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_bad_input_raises_the_general_paths_errors_and_changes_nothing(name):
    """Every bad call on the one-instance path raises the ValueError the general path raises, word
    for word, and leaves the agent acting as its twin that never saw it."""
    fast, slow = agents.make(name, seed=5), general(agents.make(name, seed=5))
    data = list(rounds(5, n=40))
    for X, noise in data[:20]:
        a = fast.act(X)
        assert slow.act(X) == a
        fast.observe(X, a, noise)
        slow.observe(X, a, noise)
    X = np.random.default_rng(0).normal(size=(4, 10))
    for what, call in _bad_calls(X, 2):
        _same_refusal(fast, slow, what, call,
                      "observe" in what or "action" in what or "reward" in what or "chosen" in what)
    for X, noise in data[20:]:
        a = fast.act(X)
        assert slow.act(X) == a
        fast.observe(X, a, noise)
        slow.observe(X, a, noise)


def _bad_batched_calls(X, a):
    """(what, call on an agent) for every kind of bad input of a started batched agent serving one
    instance, and a few unusual good ones (lists, other dtypes) that the shortcut leaves to the general path."""
    def with_value(value, row):
        Z = X.copy()
        Z[row, 0] = value
        return Z[None]

    A, other, ok = np.array([a]), 1 - a, np.array([0.5])
    return [
        ("NaN obs", lambda ag: ag.act(with_value(np.nan, other))),
        ("inf obs", lambda ag: ag.act(with_value(np.inf, other))),
        ("wrong d", lambda ag: ag.act(X[None, :, :-1])),
        ("2-D obs", lambda ag: ag.act(X)),
        ("two instances", lambda ag: ag.act(np.stack([X, X]))),
        ("no arms", lambda ag: ag.act(X[None, :0])),
        ("string obs", lambda ag: ag.act(X[None].astype(str))),
        ("observe wrong d", lambda ag: ag.observe(X[None, :, :-1], A, ok)),
        ("observe 2-D", lambda ag: ag.observe(X, A, ok)),
        ("int action", lambda ag: ag.observe(X[None], a, ok)),
        ("two actions", lambda ag: ag.observe(X[None], np.array([a, a]), ok)),
        ("float actions", lambda ag: ag.observe(X[None], A.astype(float), ok)),
        ("action out of range", lambda ag: ag.observe(X[None], np.array([len(X)]), ok)),
        ("negative action", lambda ag: ag.observe(X[None], np.array([-1]), ok)),
        ("float reward", lambda ag: ag.observe(X[None], A, 0.5)),
        ("two rewards", lambda ag: ag.observe(X[None], A, np.array([0.5, 0.5]))),
        ("NaN reward", lambda ag: ag.observe(X[None], A, np.array([np.nan]))),
        ("inf reward", lambda ag: ag.observe(X[None], A, np.array([-np.inf]))),
        ("huge reward", lambda ag: ag.observe(X[None], A, np.array([1e101]))),
        ("string reward", lambda ag: ag.observe(X[None], A, np.array(["x"]))),
        ("NaN chosen features", lambda ag: ag.observe(with_value(np.nan, a), A, ok)),
        ("huge chosen features", lambda ag: ag.observe(with_value(2e100, a), A, ok)),
        ("inf float32 features", lambda ag: ag.observe(with_value(np.inf, a).astype(np.float32), A, ok)),
    ], [
        ("lists", lambda ag: ag.observe(X[None].tolist(), [a], [0.5])),
        ("uint8 action, float32 and int rewards", lambda ag: (ag.observe(X[None], A.astype(np.uint8), ok.astype(np.float32)),
                                                             ag.observe(X[None], A, np.array([2])))),
        ("float32 obs", lambda ag: ag.observe(X[None].astype(np.float32), A, ok)),
        ("int obs", lambda ag: ag.observe(np.rint(X[None] * 3).astype(np.int64), A, ok)),
    ]


@pytest.mark.parametrize("name", LINEAR)
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_batched_agent_serving_one_instance_takes_the_shortcut_with_the_general_paths_errors(name):
    """A batched agent seeded [s] runs the one-instance hooks (what a runner playing one seed through
    the batched path pays); every bad call raises the general path's ValueError word for word and
    changes nothing, and the unusual good calls learn as the general path does."""
    fast, slow = agents.make(name, seed=[5]), general(agents.make(name, seed=[5]))
    data = list(rounds(5, n=40))

    def play(rows):
        for X, noise in rows:
            a = fast.act(X[None])
            np.testing.assert_array_equal(slow.act(X[None]), a, strict=True)
            fast.observe(X[None], a, np.array([noise]))
            slow.observe(X[None], a, np.array([noise]))

    play(data[:20])
    X = np.random.default_rng(0).normal(size=(4, 10))
    bad, good = _bad_batched_calls(X, 2)
    for what, call in bad:
        _same_refusal(fast, slow, what, call, True)
    for what, call in good:
        call(fast)
        call(slow)
        for key, value in state(slow).items():
            np.testing.assert_array_equal(getattr(fast, key), value, err_msg=f"{what}: {key}", strict=True)
    checked = []                                             # the shortcut: the general path's check never runs
    fast._check_obs = lambda *args, **kwargs: checked.append(1) or LinearAgent._check_obs(fast, *args, **kwargs)
    play(data[20:])
    assert not checked
    for key, value in state(slow).items():
        np.testing.assert_array_equal(getattr(fast, key), value, err_msg=key, strict=True)
    assert fast.t_ == slow.t_ == 45


@pytest.mark.parametrize("seed", [3, [3]], ids=["single", "batched N=1"])
def test_copies_of_a_started_agent_keep_to_their_own_state(seed):
    """LinUCB keeps views of its state and a scratch for its scores (`_views`): a deepcopy or a pickle
    of a started agent rebuilds them on its own arrays, so original and copies, each fed the same
    rounds, act and learn as one agent fed them alone (a copied view would still read, or write,
    the other's arrays)."""
    wrap = (lambda X: X) if isinstance(seed, int) else (lambda X: X[None])
    feedback = (lambda a, r: (a, r)) if isinstance(seed, int) else (lambda a, r: (a, np.array([r])))
    data = list(rounds(3, n=80))
    agent, alone = agents.make("LinUCB", seed=seed), agents.make("LinUCB", seed=seed)
    for X, noise in data[:40]:
        for ag in (agent, alone):
            ag.observe(wrap(X), *feedback(ag.act(wrap(X)), noise))
    assert agent._views1 is not None
    clones = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    assert all(clone._views1 is None for clone in clones)
    for X, noise in data[40:]:
        want = alone.act(wrap(X))
        alone.observe(wrap(X), *feedback(want, noise))
        for ag in (agent, *clones):
            a = ag.act(wrap(X))
            np.testing.assert_array_equal(a, want)
            ag.observe(wrap(X), *feedback(a, noise))
    for ag in (agent, *clones):
        for key, value in state(alone).items():
            np.testing.assert_array_equal(getattr(ag, key), value, err_msg=key, strict=True)


def test_a_subclass_without_one_instance_hooks_takes_the_general_path():
    """Overriding a batched method without its one-instance form turns the shortcut off for it, so the
    override runs in single mode too; an override the hooks do not replace keeps the shortcut."""
    calls = []

    class OwnScores(LinUCB):
        """LinUCB with its own scores."""

        def _scores(self, X):
            calls.append("scores")
            return super()._scores(X)

    class OwnUpdate(LinUCB):
        """LinUCB with its own update."""

        def _update(self, x, y):
            calls.append("update")
            super()._update(x, y)

    class OwnWidth(LinUCB):
        """LinUCB with twice the width (the width is read by _scores1 and computed by _update1)."""

        def _set_width(self, t=1):
            super()._set_width(t)
            self.width_ = 2.0 * self.width_

    class Counted(LinUCB):
        """LinUCB that counts its observations (no hook replaced)."""

        def observe(self, obs, action, reward):
            calls.append("observe")
            super().observe(obs, action, reward)

    assert (OwnScores._act1, OwnScores._observe1) == (False, True)
    assert (OwnUpdate._act1, OwnUpdate._observe1) == (True, False)
    assert (OwnWidth._act1, OwnWidth._observe1) == (False, False)    # LinUCB's _update1 computes the width inline
    assert (Counted._act1, Counted._observe1) == (True, True)
    assert not LinearAgent._act1 and not LinearAgent._observe1
    X = np.eye(3)
    for cls in (OwnScores, OwnUpdate):
        agent = cls(seed=0)
        for _ in range(3):
            agent.observe(X, agent.act(X), 1.0)
    assert calls.count("scores") == 3 and calls.count("update") == 3
    single, batched = OwnWidth(seed=1), OwnWidth(seed=[1])
    for X, noise in rounds(1, n=60):
        a = single.act(X)
        assert batched.act(X[None]).tolist() == [a]
        single.observe(X, a, noise)
        batched.observe(X[None], np.array([a]), np.array([noise]))
    np.testing.assert_array_equal(single.width_, batched.width_)


@pytest.mark.parametrize("reference", ["gaussian", "sphere", "cube", "coordinate", "sparse"])
def test_ensemble_pp_one_instance_for_every_reference(reference):
    """Linear-Ensemble++ draws a Gaussian reference through its one-instance stream, the others through
    sample_reference: every kind matches the batched agent, actions and state."""
    fast = agents.make("Linear-Ensemble++", seed=2, reference=reference, perturbation="coordinate", M=4)
    batched = agents.make("Linear-Ensemble++", seed=[2], reference=reference, perturbation="coordinate", M=4)
    for X, noise in rounds(2, n=60):
        a = fast.act(X)
        assert batched.act(X[None]).tolist() == [a]
        fast.observe(X, a, noise)
        batched.observe(X[None], np.array([a]), np.array([noise]))
    np.testing.assert_array_equal(fast.W_, batched.W_, strict=True)
