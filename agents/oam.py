"""Optimal-allocation agents for linear contextual bandits with finitely many action sets:
OAM ([S4] Hao, Lattimore, Szepesvari, Alg. 1) and OSSB (Combes, Magureanu, Proutiere 2017).

Both are batched (agents.base): obs is the (K, d) action set of the round, or (N, K, d) for N
independent instances, and instance i of an agent seeded [s_1..s_N] makes exactly the choices of a
single agent seeded s_i (the single agent is the N = 1 case of the same code). The allocation
program they share is in agents/oam_program.py.

Contexts. In [S4] the context *is* the action set: a context is identified by the exact bytes of the
obs array (converted to float64), discovered online, per instance. The first `max_contexts` distinct
action sets of each instance are tracked (statistics, counts, allocation); rounds with an action set
beyond that budget (e.g. a problem whose arms are redrawn every round, where these algorithms do not
apply) are played by a documented fallback and leave no per-context state, so memory stays bounded.
The tracked contexts of all instances live in stacked arrays (`_Contexts`), so the per-round work
(OAM's estimated gaps of every tracked context, the exploitation test, the targets and the forced-
exploration test; OSSB's means, gaps and tests) is a few array operations for all instances. The
allocation program is solved per instance, in a loop over the instances that need a re-solve (a
lazy rule makes that rare): its projection (an SVD) and its size differ between instances, and each
instance keeps its own compiled CVXPY programs, whose re-solves can differ in the last digits from
a first solve, so that an instance solves exactly what a single agent would.

Propensities (`action_probs`) are exact for both: every random draw of `act` is a uniform tie-break
(`agents.base.random_argmax`) or OSSB's uniformly random arm for an untracked action set, and
everything else is a deterministic function of the state, so `_probs` runs `act`'s decision
(initialisation / exploitation / forced exploration / tracking / wasted round; OSSB's first pulls,
exploitation, forced exploration, tracking) on the state without changing it and splits the ties
evenly.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from agents.base import _child, argmax_probs, check_finite, random_argmax, register
from agents.linear import LinUCB
from agents.oam_program import barycentric_spanner, oam_f, optimal_allocation
from agents.params import Bool, Int, LogUniform, Real, Str, Uniform

__all__ = ["OAM", "OSSB", "optimal_allocation", "barycentric_spanner", "oam_f"]

_GAP_TOL = 1e-12           # estimated gaps below this (relative to the largest |<x, theta_hat>|) count as 0


def _gaps(v: np.ndarray) -> np.ndarray:
    """Estimated gaps max_y <y, theta_hat> - <x, theta_hat> along the last axis of v = <x, theta_hat>,
    with gaps below _GAP_TOL (relative) set to 0: those arms are the estimated-optimal x_hat*."""
    gaps = v.max(axis=-1, keepdims=True) - v
    tol = _GAP_TOL * np.maximum(np.abs(v).max(axis=-1, keepdims=True), 1.0)
    return np.where(gaps > tol, gaps, 0.0)


class _Contexts:
    """The action sets each of N instances has tracked, at most `limit` per instance, and the
    agent's per-context state.

    An instance finds a context by the bytes of its float64 (K, d) array (`index`); `where[i][m]` is
    the (K, slot) of instance i's m-th context in order of discovery. Contexts with K arms share a
    block of stacked arrays: `blocks[K]["arms"]` (N, slots, K, d), `blocks[K]["count"]` (N,) slots in
    use ("valid" (N, slots, 1) marks them), and one array per field, (N, slots) + shape, where "K" in
    a field's shape stands for the number of arms. Blocks grow by doubling their slots, filling the
    new ones with the fields' fills (empty slots hold zero arms)."""

    def __init__(self, n: int, limit: int, fields: dict):
        self.n, self.limit, self.fields = n, limit, fields
        self.index: list[dict[bytes, int]] = [{} for _ in range(n)]
        self.where: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.blocks: dict[int, dict[str, np.ndarray]] = {}
        self.tracked = np.zeros(n, dtype=np.int64)       # number of tracked contexts of each instance

    def lookup(self, X: np.ndarray, add: bool) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """(m, slot, added) for the action sets X (N, K, d): each instance's context index and slot
        (-1: not tracked), and the instances whose set was added now (`add`, and room left)."""
        K = X.shape[1]
        m, slot, added = [], [], []
        for i, A in enumerate(X):
            key = np.ascontiguousarray(A, dtype=np.float64).tobytes()
            j = self.index[i].get(key)
            if j is None and add and len(self.where[i]) < self.limit:
                j = self.index[i][key] = len(self.where[i])
                self.where[i].append((K, self._new_slot(i, A)))
                self.tracked[i] += 1
                added.append(i)
            m.append(-1 if j is None else j)
            slot.append(-1 if j is None else self.where[i][j][1])
        return np.array(m), np.array(slot), added

    def _new_slot(self, i: int, A: np.ndarray) -> int:
        K, d = A.shape
        block = self.blocks.get(K)
        if block is None:
            block = self.blocks[K] = {"arms": np.zeros((self.n, 1, K, d)), "count": np.zeros(self.n, dtype=np.int64),
                                      "valid": np.zeros((self.n, 1, 1), dtype=bool)}
            for name, (shape, dtype, fill) in self.fields.items():
                block[name] = np.full((self.n, 1) + self._shape(shape, K), fill, dtype=dtype)
        s = int(block["count"][i])
        if s == block["arms"].shape[1]:                                # full: double the slots
            grow = min(s, self.limit - s)
            for name, arr in block.items():
                if name != "count":
                    fill = self.fields[name][2] if name in self.fields else 0.0
                    pad = np.full(arr.shape[:1] + (grow,) + arr.shape[2:], fill, dtype=arr.dtype)
                    block[name] = np.concatenate([arr, pad], axis=1)
        block["arms"][i, s] = A
        block["valid"][i, s] = True
        block["count"][i] += 1
        return s

    @staticmethod
    def _shape(shape: tuple, K: int) -> tuple:
        return tuple(K if s == "K" else s for s in shape)

    def arms(self, i: int) -> list[np.ndarray]:
        """Instance i's tracked action sets, in order of discovery."""
        return [self.blocks[K]["arms"][i, s] for K, s in self.where[i]]

    def get(self, name: str, i: int) -> list:
        """Field `name` of each of instance i's tracked contexts, in order of discovery."""
        return [self.blocks[K][name][i, s] for K, s in self.where[i]]

    def current(self, name: str, K: int, slot: np.ndarray, default) -> np.ndarray:
        """Field `name` of the round's context of every instance ((N,) + shape; `default` where the
        round's action set is not tracked)."""
        block = self.blocks.get(K)
        if block is not None and slot.min() >= 0:                     # the usual case: every instance tracks it
            return block[name][np.arange(len(slot)), slot]
        out = np.full((len(slot),) + self._shape(self.fields[name][0], K), default, dtype=self.fields[name][1])
        rows = np.flatnonzero(slot >= 0)
        if rows.size:
            out[rows] = block[name][rows, slot[rows]]
        return out


# what OAM and OSSB share besides LinUCB's lam
_COMMON = {"horizon": Int(ge=3), "max_contexts": Int(ge=1), "zeta": Real(ge=0), "solver": (Str(), None)}


class _AllocationAgent:
    """What OAM and OSSB share on top of LinUCB: the tracked action sets, `_update` sees the whole
    round's obs and actions (it needs the action set, not only the pulled arm), one cache of compiled
    CVXPY programs per instance (dropped by pickling: a cache, rebuilt on demand)."""

    index_policy = False         # the decision is not an argmax of LinUCB's scores; `_probs` gives it
    _FIELDS: dict = {}           # per-context state: name -> (shape, dtype, fill), see `_Contexts`

    @property
    def observe_rows(self):
        """Not offered (so `hasattr` is False): the per-instance state of the tracked action sets and
        forced exploration is not cut to rows; under partial feedback the run loop runs N single agents."""
        raise AttributeError(f"{type(self).__name__} has no observe_rows: it updates all its instances at once")

    @property
    def observe_arrivals(self):
        """Not offered either (`observe_rows`)."""
        raise AttributeError(f"{type(self).__name__} has no observe_arrivals: it updates all its instances at once")

    def _reset(self) -> None:
        super()._reset()
        self.contexts_ = None        # _Contexts, created with the first obs
        self._programs = []          # compiled CVXPY programs of each instance (a cache)
        self._pending = None

    def _init_state(self, n, d):
        self.contexts_ = _Contexts(n, self.max_contexts, self._fields(d))
        self._programs = [{} for _ in range(n)]
        self.solves_ = np.zeros(n, dtype=np.int64)             # allocation programs solved
        self.solver_failures_ = np.zeros(n, dtype=np.int64)
        self.untracked_rounds_ = np.zeros(n, dtype=np.int64)
        super()._init_state(n, d)

    def _fields(self, d: int) -> dict:
        return self._FIELDS

    def __getstate__(self):
        state = super().__getstate__()
        state["_programs"] = [{} for _ in self._programs]   # compiled CVXPY programs are a cache
        return state

    def __deepcopy__(self, memo):
        """A deep copy shares the programs compiled so far (each keeps its own dict of them): a
        re-solve sets every parameter and, with CLARABEL, its result depends only on the data, so
        sharing changes no result. (A first solve can differ in the last digits, which is why a
        program compiled later is not shared.)"""
        state = super().__getstate__()
        programs, pool = state.pop("_programs"), state.pop("_copy_pool", None)
        new = memo[id(self)] = type(self).__new__(type(self))
        new.__setstate__(copy.deepcopy(state, memo))
        new._programs = pool if pool is not None else [dict(p) for p in programs]
        return new

    def _sampled_probs(self, obs, draws: int, salt: int = 0) -> np.ndarray:
        """BaseAgent's Monte-Carlo estimate (agents.checks compares it with the exact `_probs`), its
        copies sharing one pool of programs: one compiled by a copy is re-solved by the next instead
        of compiled again (that first solve may differ from a fresh one in the last digits, which an
        estimate does not notice; the agent's own programs are not touched)."""
        self._copy_pool = [dict(p) for p in self._programs]
        try:
            return super()._sampled_probs(obs, draws, salt)
        finally:
            del self._copy_pool

    def _feedback(self, X, action, reward):
        a, y = super()._feedback(X, action, reward)
        self._pending = (X, a)       # for `_update`, which LinearAgent calls with the pulled arms only
        return a, y

    def _track(self, X: np.ndarray, commit: bool):
        """(table, m, slot) for the round's obs: the contexts with X's action sets added where new
        (room left). commit=False (propensities) adds them to a copy, leaving the agent unchanged."""
        table = self.contexts_
        if not commit:
            m, slot, _ = table.lookup(X, add=False)
            if not ((slot < 0) & (table.tracked < table.limit)).any():
                return table, m, slot
            table = copy.deepcopy(table)
        m, slot, added = table.lookup(X, add=True)
        for i in added:
            self._new_context(table, i, X[i])
        return table, m, slot

    def _commit_round(self, x, y):
        """The shared start of `_update`: LinUCB's update, the round's action sets tracked for good;
        returns (X, a, block of X's set size (None when no set of that size is tracked), slot (N,),
        rows: the instances whose set is tracked)."""
        X, a = self._pending
        self._pending = None
        super()._update(x, y)   # LinUCB's state (OSSB's rule does not use it; kept for the shared validation)
        table, _, slot = self._track(X, commit=True)
        rows = self._rows
        if slot.min() < 0:
            self.untracked_rounds_ += slot < 0
            rows = np.flatnonzero(slot >= 0)
        return X, a, table.blocks.get(X.shape[1]), slot, rows

    def _new_context(self, table: _Contexts, i: int, A: np.ndarray) -> None:
        """Per-context state that is not a constant fill (hook)."""

    def _draw(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """random_argmax of the instances `rows`, each breaking ties with its own stream."""
        return random_argmax(values, self.rng_ if len(rows) == self.n_ else [self.rng_.gens[i] for i in rows])

    def _solve(self, i: int, arms: np.ndarray, gaps: np.ndarray, scale: float, commit: bool):
        """`optimal_allocation` for instance i with its own program cache; a probe (commit=False)
        re-solves a compiled program (the result depends only on the data) but keeps no new one."""
        cache = self._programs[i] if commit else dict(self._programs[i])
        return optimal_allocation(arms, gaps, scale, solver=self.solver, cache=cache)[0]


INIT, EXPLOIT, EXPLORE, FORCED, WASTED = range(5)
_ROUNDS = ("init", "exploit", "explore", "forced", "wasted")


@register("OAM")
class OAM(_AllocationAgent, LinUCB):
    """Optimal Allocation Matching, [S4] section 4.1 Algorithm 1 (choices: docs/papers.md, S4-A1 to S4-A9).

    Statistics: least squares theta_hat_t = G_t^{-1} sum X_s Y_s with G_t = lam I + sum X_s X_s^T
    ([S4] has no regulariser; lam = 1e-6 only keeps G invertible before the initialisation ends and
    for action sets that do not span R^d; it is far below one observation's weight). G_t^{-1},
    theta_hat and log det G_t are LinUCB's own rank-one-updated state (this class is LinUCB with
    OAM's decision rule; its wasted rounds use LinUCB's scoring). Estimated gaps
    Delta_hat^m_x = max_y <y - x, theta_hat>, Delta_hat_min the smallest nonzero one over the
    tracked contexts (and the current one).

    Each round t with context (action set) A^{c_t}:
    1. Initialisation (while G is rank deficient, i.e. the first d rounds when every action set spans
       R^d): play the arm with the largest component orthogonal to the span of the arms played so
       far ([S4]: "any arm not in the span"). If the action set adds no new direction, go on with 2.
    2. Exploit if ||x||^2_{G^{-1}} <= max(Delta_hat_min^2, (Delta_hat_x)^2) / f_n for every x in
       A^{c_t} (eq. 4.3; f_n = f_{n,1/n} of eq. 4.1 with the constant c and the horizon n): play
       argmax <x, theta_hat> (eq. 4.4).
    3. Otherwise explore: s <- s + 1; target_x = min(T^{c_t}_x(Delta_hat), f_n / Delta_hat_min^2)
       (the text of section 4.1; the box prints a misplaced square, docs/papers.md, S4-A8). If some arm
       has N_x < target_x: b1 = argmin N_x / target_x, b2 = argmin N_x (eq. 4.5); play b2 if
       N_b2 <= epsilon_t s (forced exploration, s = s(t) after the increment, as in the text), else b1.
       With `spanner=True`, b2 is the least played arm of a barycentric spanner of A^{c_t} ([S4]
       Remark 4.2: forced exploration then costs d arms instead of K).
    4. Otherwise the round is "wasted": play LinUCB (eq. 4.6),
       argmax <x, theta_hat> + sqrt(f_{n, 1/s^2}) ||x||_{G^{-1}}.

    N_x counts pulls of arm x *in its context* (T^m_x is per context too; an arm vector shared by two
    action sets is counted separately in each). Ties break at random (agents.base.random_argmax), and
    they are the only random draws: `action_probs` is exact (uniform over the tied arms of the branch
    the state selects; b2 ties only matter in a forced round, b1 ties only in a tracking round).
    Rounds whose action set is beyond `max_contexts` have no allocation (target 0): they exploit or
    fall back to LinUCB. The empirical context distribution is kept (field "visits", `p_hat`) but
    the allocation does not use it: [S4]'s optimal allocation does not depend on p.

    The allocation T(Delta_hat) solves (4.2) over the arms of all tracked contexts,
        min sum_m sum_x T^m_x Delta_hat^m_x  s.t.  ||x||^2_{H_T^{-1}} <= (Delta_hat^m_x)^2 / f_n for Delta_hat^m_x > 0,
    H_T = sum T^m_x x x^T, T in [0, inf], with the estimated gaps in the constraint (docs/papers.md,
    S4-A7), exactly: T = inf on the estimated-optimal arms (free), closed form when they leave one free
    direction (see `optimal_allocation`). So the target of x_hat* is f_n / Delta_hat_min^2, and the
    tracking (b1) pulls x_hat* and the arms with the most information per unit regret.
    Lazily ([S4] section 5): re-solved when det G_t has grown by a factor (1 + zeta) since the last
    solve, when a new action set is tracked, or when the set of estimated-optimal arms x_hat*_m has
    changed (Alg. 1 re-solves every round; without this an allocation with T = inf on a former
    x_hat* would be tracked until det G grew). `solves_` and `solve_reasons_` count the solves.

    Forced exploration. With the paper's rate epsilon_t = 1 / log log t (epsilon=None; >= 0.45 for
    t <= 10^4) and K >= 3 arms, N_b2 <= epsilon_t s(t) holds in every exploration round (min N <= s /
    K): every exploration round is forced, i.e. round-robin over the arms, and the regret is linear
    until (4.3) holds ([S4]'s proof, App. B.3, needs epsilon_t <= 1 / |A|, "satisfied when t is
    large"). The default is therefore a constant epsilon = 0.001, well below 1 / K, which learns;
    epsilon=0.01 with spanner=True (forced fraction d * epsilon) is another. Measurements: docs/oam.md.

    State (N = number of instances, 1 for a single agent): counters `s_` (exploration rounds s(t)),
    `solves_`, `solver_failures_`, `untracked_rounds_`, `rounds_[kind]` and `solve_reasons_[reason]`
    are (N,) arrays; per context (`contexts_.get(field, i)`, in order of discovery): "pulls" N^m_x,
    "alloc" T^m_x (0 before a solve covered the context), "spanner" (the forced-exploration arms), "visits".

    Args:
        horizon: n, the run length used by f_n ([S4] does not state it; docs/papers.md, S4-A1).
        c: the absolute constant c of f_{n,delta} (eq. 4.1; [S4] gives no value, S4-A2: c = 1).
        zeta: lazy-update factor (re-solve when det G_t >= (1 + zeta) det G_at_last_solve); [S4]: 0.1.
        epsilon: forced-exploration rate, a constant in [0, 1] (default 0.001), or None for [S4] Thm
            4.3's epsilon_t = 1 / log(log t), capped at 1 (for t < e^e, where log log t <= 1).
        spanner: forced exploration on a barycentric spanner of each action set (Remark 4.2) instead
            of on all its arms.
        lam: ridge keeping G_t invertible (see above).
        max_contexts: number of distinct action sets tracked (per instance).
        solver: CVXPY solver name, or None for CVXPY's default choice.
    """

    params = {**_COMMON, "c": Real(ge=0), "epsilon": (Real(ge=0, le=1), None), "spanner": Bool()}
    search_space = {"c": LogUniform(0.01, 10), "lam": None}   # lam: a numerical ridge of the allocation, not searched
    _FIELDS = {"pulls": (("K",), np.int64, 0), "spanner": (("K",), bool, True), "alloc": (("K",), float, 0.0),
               "optimal_at_solve": (("K",), bool, False), "visits": ((), np.int64, 0)}

    def __init__(self, *, horizon: int = 10_000, c: float = 1.0, zeta: float = 0.1, epsilon: float | None = 0.001,
                 spanner: bool = False, lam: float = 1e-6, max_contexts: int = 10, solver: str | None = "CLARABEL",
                 seed=None, dim: int | None = None):
        self.horizon, self.c, self.zeta, self.epsilon, self.spanner = horizon, c, zeta, epsilon, spanner
        self.max_contexts, self.solver = max_contexts, solver
        super().__init__(lam=lam, seed=seed, dim=dim)

    # -- state ----------------------------------------------------------------------------------
    def _reset(self) -> None:
        super()._reset()
        self._round_counts = np.zeros((0, len(_ROUNDS)), dtype=np.int64)   # (N, kinds) once started

    def _init_state(self, n, d):
        self.f_n_ = oam_f(self.horizon, 1.0 / self.horizon, d, self.c)
        self.s_ = np.zeros(n, dtype=np.int64)                        # exploration rounds s(t)
        self._round_counts = np.zeros((n, len(_ROUNDS)), dtype=np.int64)
        self.solve_reasons_ = {"context": np.zeros(n, dtype=np.int64), "argmax": np.zeros(n, dtype=np.int64),
                               "det": np.zeros(n, dtype=np.int64)}
        self.solved_contexts_ = np.zeros(n, dtype=np.int64)          # tracked contexts at the last solve
        self.logdet_at_solve_ = np.full(n, -np.inf)
        self.basis_ = np.zeros((n, d, d))     # orthonormal basis of the span of the arms played (initialisation)
        self.rank_ = np.zeros(n, dtype=np.int64)                     # ... its first rank_ rows
        self.width_ = np.zeros((n, 1))
        self._width_s = np.zeros(n, dtype=np.int64)                  # the s each row of width_ is for
        super()._init_state(n, d)

    def _set_width(self, t: int = 1) -> None:
        """eq. (4.6): the LinUCB width sqrt(f_{n, 1/s^2}) of the next wasted round, whose exploration
        count will be s = s_ + 1 (recomputed only where s_ changed)."""
        s = self.s_ + 1
        for i in np.flatnonzero(s != self._width_s):
            self.width_[i, 0] = math.sqrt(oam_f(self.horizon, 1.0 / int(s[i]) ** 2, self.d_, self.c))
            self._width_s[i] = s[i]

    @property
    def rounds_(self) -> dict[str, np.ndarray]:
        """Rounds of each kind ("init", "exploit", "explore", "forced", "wasted") per instance, (N,) each."""
        return {name: self._round_counts[:, k] for k, name in enumerate(_ROUNDS)}

    def p_hat(self, i: int = 0) -> np.ndarray:
        """Empirical distribution of instance i's tracked contexts (order of discovery)."""
        counts = np.asarray(self.contexts_.get("visits", i), dtype=float)
        return counts / counts.sum() if counts.sum() > 0 else counts

    def _new_context(self, table, i, A):
        if self.spanner:
            K, _ = A.shape
            _, slot = table.where[i][-1]
            table.blocks[K]["spanner"][i, slot] = np.isin(np.arange(K), barycentric_spanner(A))

    # -- the protocol ---------------------------------------------------------------------------
    def _update(self, x, y):
        X, a, block, slot, rows = self._commit_round(x, y)
        if rows.size:
            block["pulls"][rows, slot[rows], a[rows]] += 1
            block["visits"][rows, slot[rows]] += 1
        if self.rank_.min() < self.d_:
            for i in np.flatnonzero(self.rank_ < self.d_):          # the span of the arms played so far
                B = self.basis_[i, :self.rank_[i]]
                r = x[i] - B.T @ (B @ x[i])
                if np.linalg.norm(r) > 1e-9 * max(np.linalg.norm(x[i]), 1e-300):
                    self.basis_[i, self.rank_[i]] = r / np.linalg.norm(r)
                    self.rank_[i] += 1

    def _choose(self, X):
        X = check_finite(X).astype(float, copy=False)
        table, m, slot = self._track(X, commit=True)
        plan = self._plan(X, table, m, slot, commit=True)
        for i, (reason, T) in plan["solves"].items():
            self._store_solve(i, reason, T, plan["optimal"])
        kind, values = plan["kind"], plan["values"]
        self._round_counts[self._rows, kind] += 1
        if kind.max() >= EXPLORE:
            self.s_ += kind >= EXPLORE                               # 3. explore: s(t) = s(t-1) + 1
            self._set_width()
        actions = np.zeros(len(kind), dtype=np.int64)
        rows = self._rows
        if kind.min() == INIT:
            for i in np.flatnonzero(kind == INIT):
                actions[i] = random_argmax(values[i], self.rng_.gens[i], atol=plan["atol"][i])
            rows = np.flatnonzero(kind != INIT)
        if "b1" in plan:                                             # (4.5): b1 is drawn first, then b2
            forced = kind == FORCED
            actions[rows] = self._draw(np.where(forced[:, None], plan["b1"], values)[rows], rows)
            rows = np.flatnonzero((kind == EXPLORE) | forced)
            if rows.size:
                actions[rows] = np.where(forced[rows], self._draw(plan["b2"][rows], rows), actions[rows])
        elif rows.size:
            actions[rows] = self._draw(values[rows], rows)
        return actions

    def _probs(self, X):
        X = check_finite(X).astype(float, copy=False)
        table, m, slot = self._track(X, commit=False)
        plan = self._plan(X, table, m, slot, commit=False)
        kind, probs = plan["kind"], np.zeros(X.shape[:2])
        for i in np.flatnonzero(kind == INIT):
            probs[i] = argmax_probs(plan["values"][i], atol=plan["atol"][i])
        rows = np.flatnonzero(kind != INIT)
        probs[rows] = argmax_probs(plan["values"][rows])
        return probs

    def _store_solve(self, i: int, reason: str, T, optimal: dict) -> None:
        """Record instance i's solve of this round; a failed solve keeps the previous allocation."""
        table = self.contexts_
        self.solves_[i] += 1
        self.solve_reasons_[reason][i] += 1
        self.logdet_at_solve_[i] = self.logdet_[i, 0]
        self.solved_contexts_[i] = len(table.where[i])    # attempted; a failed solve keeps the old allocation
        for K, block in table.blocks.items():
            block["optimal_at_solve"][i] = optimal[K][i]
        if T is None:
            self.solver_failures_[i] += 1
            return
        start = 0
        for K, s in table.where[i]:
            table.blocks[K]["alloc"][i, s] = T[start:start + K]
            start += K

    # -- decision -------------------------------------------------------------------------------
    def _epsilon(self, t: int) -> float:
        if self.epsilon is not None:
            return float(self.epsilon)
        return 1.0 / max(1.0, math.log(math.log(max(t, 3))))

    def _plan(self, X: np.ndarray, table: _Contexts, m: np.ndarray, slot: np.ndarray, commit: bool) -> dict:
        """What `act` does on X (N, K, d) in the current state, for every instance, without changing the
        agent (except, with `commit`, the compiled programs of the solves): the branch ("kind"), the
        values whose maximisers it draws from ("values", ties within "atol"; when some instance
        explores, a tracking or forced round draws b1 from "b1" and then b2 from "b2"), the allocation
        programs solved ("solves": instance -> (reason, T)) and the estimated-optimal arms of each
        block ("optimal")."""
        n, K, d = X.shape
        theta = self.W_[:, :, -1]                                        # theta_hat_{t-1}
        kind, atol = np.full(n, -1), np.zeros(n)
        values = np.zeros((n, K))
        if self.rank_.min() < d:                                         # 1. initialisation
            for i in np.flatnonzero(self.rank_ < d):
                B, A = self.basis_[i, :self.rank_[i]], X[i]
                r = np.linalg.norm(A - (A @ B.T) @ B, axis=1)
                if r.max() > 1e-9 * max(np.linalg.norm(A, axis=1).max(), 1e-300):
                    kind[i], values[i], atol[i] = INIT, r, 1e-12 * r.max()
        # Delta_hat^m(t-1) for every tracked context; Delta_hat_min(t-1) over them and the current set
        gmin, block_v, block_gaps, optimal = np.full(n, np.inf), {}, {}, {}
        changed = table.tracked != self.solved_contexts_                 # a context tracked since the last solve
        for Kb, block in table.blocks.items():
            block_v[Kb] = (block["arms"] @ theta[:, None, :, None])[..., 0]
            g = block_gaps[Kb] = _gaps(block_v[Kb])
            opt = optimal[Kb] = (g == 0) & block["valid"]              # which arms are x_hat*_m
            gmin = np.minimum(gmin, np.where(g > 0, g, np.inf).min(axis=(1, 2)))   # empty slots: g = 0
            changed |= (opt != block["optimal_at_solve"]).any(axis=(1, 2))
        if slot.min() >= 0:                                              # every instance tracks the round's set
            v, gaps = block_v[K][self._rows, slot], block_gaps[K][self._rows, slot]
        else:
            v = (X @ theta[:, :, None])[:, :, 0]                         # <x, theta_hat> of the round's arms
            gaps = _gaps(v)
            gmin = np.minimum(gmin, np.where(gaps > 0, gaps, np.inf).min(axis=1))
        gmin = np.where(gmin < np.inf, gmin, 0.0)
        gmin2 = np.array([g ** 2 for g in gmin.tolist()])              # Python's pow, as the reference computes it
        alloc = table.current("alloc", K, slot, 0.0)                    # T^{c_t} (0 before a solve covers c_t)
        det = self.logdet_[:, 0] - self.logdet_at_solve_ >= math.log1p(self.zeta)
        solves, stale = {}, (m >= self.solved_contexts_) | changed | det
        for i in np.flatnonzero(stale & (kind < 0) & (slot >= 0)) if stale.any() else ():
            reason = "context" if m[i] >= self.solved_contexts_[i] else "argmax" if changed[i] else "det"
            where = table.where[i]
            T = self._solve(i, np.concatenate(table.arms(i)), np.concatenate([block_gaps[Kc][i, s] for Kc, s in where]),
                            self.f_n_, commit)
            solves[i] = (reason, T)
            if T is not None:
                start = sum(Kc for Kc, _ in where[:m[i]])
                alloc[i] = T[start:start + K]
        plan = {"kind": kind, "values": values, "atol": atol, "solves": solves, "optimal": optimal}
        norms = np.einsum("nkd,nde,nke->nk", X, self.W_[:, :, :-1], X)  # ||x||^2_{G_{t-1}^{-1}}
        exploit = np.all(norms <= np.maximum(gmin2[:, None], gaps**2) / self.f_n_, axis=1) & (kind < 0)
        kind[exploit], values[exploit] = EXPLOIT, v[exploit]            # 2. exploit: (4.3) holds, play (4.4)
        if kind.min() >= 0:
            return plan
        # 3. explore, with s(t) = s(t-1) + 1: targets min(T^{c_t}_x, f_n / Delta_hat_min^2)
        cap = np.array([self.f_n_ / g2 if g2 > 0 else np.inf for g2 in gmin2.tolist()])
        target = np.minimum(alloc, cap[:, None])
        N = table.current("pulls", K, slot, 0)
        track = (N < target).any(axis=1) & (kind < 0)
        if track.any():
            b1 = -np.where(target > 0, N / np.where(target > 0, target, 1.0), np.inf)   # (4.5): argmin N_x / target_x
            if self.spanner:                                             # Remark 4.2: argmin over the spanner
                spanner = table.current("spanner", K, slot, True)
                b2, n_b2 = np.where(spanner, -N, -np.inf), np.where(spanner, N, N.max()).min(axis=1)
            else:
                b2, n_b2 = -N.astype(float), N.min(axis=1)               # (4.5): argmin N_x
            forced = track & (n_b2 <= self._epsilon(self.t_ + 1) * (self.s_ + 1))   # forced exploration, eps_t s(t)
            kind[forced], values[forced] = FORCED, b2[forced]
            kind[track & ~forced], values[track & ~forced] = EXPLORE, b1[track & ~forced]
            plan.update(b1=b1, b2=b2)
        wasted = kind < 0                                                # 4. wasted: LinUCB (4.6)
        if wasted.any():
            kind[wasted], values[wasted] = WASTED, self._checked_scores(X)[wasted]
        return plan


@register("OSSB")
class OSSB(_AllocationAgent, LinUCB):
    """OSSB, Optimal Sampling for Structured Bandits (Combes, Magureanu, Proutiere 2017), for a
    linear bandit with Gaussian noise (the standard definition, as [S4] only cites it; docs/papers.md, S4-A4).

    Per arm empirical means mu_hat_x and counts N_x (no least squares: OSSB estimates each arm's mean
    on its own and uses the linear structure only in the allocation). Each round, with
    x_hat* = argmax mu_hat and Delta_hat_x = mu_hat(x_hat*) - mu_hat_x:
    - an arm never pulled is pulled first (mu_hat undefined);
    - eta(Delta_hat) solves the Graves-Lai program for linear-Gaussian structure
          min sum_x eta_x Delta_hat_x  s.t.  ||x - x_hat*||^2_{(sum eta_x x x^T)^{-1}} <= Delta_hat_x^2 / 2  (Delta_hat_x > 0),
      eta in [0, inf]: x_hat* costs nothing, eta = inf on it, and the program is OAM's with f_n
      replaced by 2 (`optimal_allocation`, closed form for d = 2; an earlier version boxed
      eta <= n / log n);
    - exploit (play x_hat*) if N_x >= (1 + gamma) eta_x log t for every x with Delta_hat_x > 0;
    - otherwise s <- s + 1; play argmin N_x if min N_x <= epsilon s (forced exploration), else
      argmin_{x: Delta_hat_x > 0} N_x / eta_x.
    Defaults epsilon = gamma = 0 (docs/papers.md, S4-A4; with epsilon = 0 forced exploration happens
    only for never-pulled arms). Combes et al. re-solve every round; to save computation the program
    is re-solved lazily as OAM's ([S4] section 5): when det(lam I + sum_x N_x x x^T) has grown by
    (1 + zeta) or the estimated optimal arm changed (zeta = 0 re-solves every round).

    Contexts: OSSB is defined for one fixed action set; here each distinct action set (identified by its
    bytes, at most `max_contexts` per instance) runs its own OSSB with its own counts, means and
    allocation (the contexts share nothing; per context fields "N", "sums", "s", "eta", "V", ...:
    `contexts_.get(field, i)`). Rounds with an action set beyond that budget play a uniformly random arm.

    Propensities are exact: x_hat* is drawn among the tied maximisers of mu_hat, and whether the
    program is re-solved depends on that draw (x_hat* changed?), so `action_probs` averages the
    decision over the tied x_hat*; the other draws are uniform tie-breaks and the untracked rounds'
    uniform arm.

    Args:
        epsilon: forced-exploration rate (>= 0).
        gamma: exploitation slack (>= 0).
        horizon: accepted for a uniform interface with OAM; not used (OSSB is anytime).
        zeta: lazy-update factor.
        lam: ridge of the design matrix used by the lazy rule and the program (keeps it invertible).
        max_contexts: number of distinct action sets tracked (per instance).
        solver: CVXPY solver name, or None for CVXPY's default choice.
    """

    params = {**_COMMON, "epsilon": Real(ge=0), "gamma": Real(ge=0)}
    search_space = {"epsilon": Uniform(0, 1), "gamma": Uniform(0, 1), "lam": None}   # lam: as OAM's

    def __init__(self, *, epsilon: float = 0.0, gamma: float = 0.0, horizon: int = 10_000, zeta: float = 0.1,
                 lam: float = 1e-6, max_contexts: int = 10, solver: str | None = "CLARABEL",
                 seed=None, dim: int | None = None):
        self.epsilon, self.gamma, self.horizon, self.zeta = epsilon, gamma, horizon, zeta
        self.max_contexts, self.solver = max_contexts, solver
        super().__init__(lam=lam, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        """Never: OSSB is anytime (its `horizon` is OAM's interface only)."""
        return False

    def _fields(self, d):
        return {"N": (("K",), np.int64, 0), "sums": (("K",), float, 0.0), "s": ((), np.int64, 0),
                "eta": (("K",), float, 0.0), "has_eta": ((), bool, False), "V": ((d, d), float, self.lam * np.eye(d)),
                "logdet_at_solve": ((), float, -np.inf), "best_at_solve": ((), np.int64, -1)}

    def _seed(self, seqs):
        super()._seed(seqs)
        # the uniform arm of an untracked round: each instance's own stream (the uniforms of its Streams)
        self.fallback_ = [np.random.default_rng(_child(s, 2)) for s in seqs]

    def _update(self, x, y):
        X, a, block, slot, rows = self._commit_round(x, y)
        if rows.size:
            s, ar = slot[rows], a[rows]
            block["N"][rows, s, ar] += 1
            block["sums"][rows, s, ar] += y[rows]
            block["V"][rows, s] += x[rows, :, None] * x[rows, None, :]

    def _state(self, X, commit: bool):
        """The round's contexts and their statistics: (table, slot, N, sums)."""
        table, _, slot = self._track(X, commit)
        K = X.shape[1]
        return table, slot, table.current("N", K, slot, 0), table.current("sums", K, slot, 0.0)

    def _choose(self, X):
        X = check_finite(X).astype(float, copy=False)
        table, slot, N, sums = self._state(X, commit=True)
        n, K, _ = X.shape
        actions, rows = np.zeros(n, dtype=np.int64), self._rows
        unpulled = (N == 0).any(axis=1)
        if slot.min() < 0 or unpulled.any():
            for i in np.flatnonzero(slot < 0):
                actions[i] = int(self.fallback_[i].random() * K)
            first = np.flatnonzero((slot >= 0) & unpulled)           # a never-pulled arm first
            if first.size:
                actions[first] = self._draw((N[first] == 0).astype(float), first)
            rows = np.flatnonzero((slot >= 0) & ~unpulled)
        if rows.size:
            actions[rows] = best = self._draw(sums[rows] / N[rows], rows)   # x_hat* = argmax mu_hat
            plan = self._decide(X, table, slot, N, sums, rows, best, {}, commit=True)
            explore = np.flatnonzero(plan["kind"] != EXPLOIT)
            if explore.size:                                         # s <- s + 1; forced, or argmin N / eta
                table.blocks[K]["s"][rows[explore], slot[rows[explore]]] += 1
                actions[rows[explore]] = self._draw(plan["values"][explore], rows[explore])
        return actions

    def _probs(self, X):
        X = check_finite(X).astype(float, copy=False)
        table, slot, N, sums = self._state(X, commit=False)
        n, K, _ = X.shape
        probs = np.full((n, K), 1.0 / K)                                 # untracked: a uniform arm
        first = np.flatnonzero((slot >= 0) & (N == 0).any(axis=1))
        probs[first] = argmax_probs((N[first] == 0).astype(float))
        rows = np.flatnonzero((slot >= 0) & (N > 0).all(axis=1))
        if rows.size:
            ties = argmax_probs(sums[rows] / N[rows]) > 0                # the x_hat* act may draw, uniformly
            count = ties.sum(axis=1)
            probs[rows] = 0.0
            solved = {}
            for j in range(count.max()):                                 # the j-th tied x_hat* of each row
                has = count > j
                sub, best = rows[has], (ties[has].cumsum(axis=1) > j).argmax(axis=1)
                plan = self._decide(X, table, slot, N, sums, sub, best, solved, commit=False)
                share = (np.arange(K) == best[:, None]).astype(float)
                if plan["values"] is not None:
                    explore = plan["kind"] != EXPLOIT
                    share[explore] = argmax_probs(plan["values"][explore])
                probs[sub] += share / count[has, None]
        return probs

    def _decide(self, X, table, slot, N, sums, rows, best, solved: dict, commit: bool) -> dict:
        """OSSB's decision for the instances `rows` (all arms pulled) given x_hat* = best: "kind"
        EXPLOIT (play best), FORCED or EXPLORE (play a maximiser of "values"); re-solves the program
        where the lazy rule asks (with `commit`, storing it; `solved` memoises the probes' solves,
        which do not depend on which tied x_hat* was drawn)."""
        K = X.shape[1]
        block, s = table.blocks[K], slot[rows]
        Nr = N[rows]
        mu = sums[rows] / Nr
        gaps = mu[np.arange(len(rows)), best][:, None] - mu                # >= 0, and exactly 0 at x_hat*
        logdet = np.linalg.slogdet(block["V"][rows, s])[1]
        eta, has_eta = block["eta"][rows, s], block["has_eta"][rows, s]   # eta = 0 before a first solve
        stale = ~has_eta | (best != block["best_at_solve"][rows, s]) | (
            logdet - block["logdet_at_solve"][rows, s] >= math.log1p(self.zeta))
        for r in np.flatnonzero(stale):
            i = rows[r]
            if i not in solved:
                solved[i] = self._solve(i, X[i], gaps[r], 2.0, commit)
            if commit:
                self.solves_[i] += 1
                block["logdet_at_solve"][i, s[r]], block["best_at_solve"][i, s[r]] = logdet[r], best[r]
                if solved[i] is None:
                    self.solver_failures_[i] += 1
                else:
                    block["eta"][i, s[r]], block["has_eta"][i, s[r]] = solved[i], True
            if solved[i] is not None:
                eta[r] = solved[i]
        sub = gaps > 0
        need = np.where(sub, (1.0 + self.gamma) * eta * math.log(max(self.t_ + 1, 2)), 0.0)  # eta = inf on x_hat*
        kind = np.where((Nr < need).any(axis=1), EXPLORE, EXPLOIT)
        values = None
        if kind.max() == EXPLORE:
            forced = (kind == EXPLORE) & (Nr.min(axis=1) <= self.epsilon * (block["s"][rows, s] + 1))
            kind[forced] = FORCED
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(sub & (eta > 0) & np.isfinite(eta), Nr / eta, np.inf)
            values = np.where(forced[:, None], -Nr.astype(float), -ratio)
        return {"kind": kind, "values": values}
