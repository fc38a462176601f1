"""The `ctxbandits` command: `run` a comparison, `plot` a results folder, `list` envs and agents,
`log` bandit feedback of a behaviour agent and estimate a target policy's value from it (`ope`).

    ctxbandits run --env CtxBandit/Logistic-v0 --agents LinUCB,LinTS --seeds 5 --horizon 2000 --out results/x
    ctxbandits run --env CtxBandit/Logistic-v0 --agents LinUCB,LinTS --seeds 1000:1010 --out results/fresh
    ctxbandits run --env CtxBandit/Logistic-v0 --agents "LinUCB(alpha=0.5),LinUCB(alpha=2),Random" --out results/a
    ctxbandits run --config my_comparison.toml --backend processes
    ctxbandits run --env CtxBandit/Distance-v0 --agents Neural-ES,NeuralTS --device cuda --out results/gpu
    ctxbandits run --import mymodule --env CtxBandit/Logistic-v0 --agents SW-LinUCB,LinUCB --out results/mine
    ctxbandits run --env CtxBandit/Linear-v0 --agents LinUCB,LinTS --delay geometric:100 --window 500 --out results/d
    ctxbandits run --backend ray --address ray://head:10001 --env CtxBandit/Logistic-v0 --agents LinUCB --out results/r
    ctxbandits plot results/x
    ctxbandits plot results/a --log --exclude Random
    ctxbandits list --import mymodule
    ctxbandits log --env CtxBandit/Linear-v0 --agent epsilon-greedy --rounds 2000 --seed 0 --out log.parquet
    ctxbandits ope log.parquet --target LinUCB --train-rounds 500
    ctxbandits ope uniform.parquet --target LinUCB --estimators ips,dr,replay
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from pathlib import Path

from gym_ctxbandits import config as cfg
from gym_ctxbandits.backends import WorkerDied
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, seed_list
from gym_ctxbandits.ray_backend import ClusterError
from gym_ctxbandits.user_modules import import_modules


def _kwargs(text: str | None, flag: str) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise cfg.ConfigError(f"{flag} must be a JSON object such as '{{\"dim\": 10}}': {err}") from None
    if not isinstance(value, dict):
        raise cfg.ConfigError(f"{flag} must be a JSON object such as '{{\"dim\": 10}}', got {text!r}")
    return value


def split_list(text: str, flag: str) -> list[str]:
    """The items of a comma-separated list, commas inside brackets or quotes left alone: "LinUCB(alpha=0.5,
    v=1),LinTS" is two items. Unbalanced brackets or quotes are a ConfigError naming `flag`."""
    items, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(text):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                break
        elif c == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    if depth or quote:
        raise cfg.ConfigError(f"{flag} {text!r}: unbalanced brackets or quotes; give e.g. \"LinUCB(alpha=0.5),LinTS\"")
    return [item for item in [*items, text[start:].strip()] if item]


def agent_spec(item: str, common: dict) -> AgentSpec:
    """The agent of one item of --agents: a name, or a name with its own hyper-parameters as Python
    keyword arguments of literal values, "LinUCB(alpha=0.5)" (read by ast.literal_eval, so nothing is
    run). Its kwargs are `common` (--agent-kwargs) updated with its own, and its label is the item,
    normalised ("LinUCB(alpha=0.5)"), so two of one agent with other values are two agents."""
    name, paren, rest = item.partition("(")
    name = name.strip()
    if not paren:
        return AgentSpec(name, dict(common))
    form = "give NAME(key=value, ...) with literal values, e.g. \"LinUCB(alpha=0.5),LinTS\""
    try:
        call = ast.parse(f"f({rest.strip().removesuffix(')')})", mode="eval").body
    except SyntaxError:
        call = None
    if not name or not rest.strip().endswith(")") or not isinstance(call, ast.Call) or call.args or \
            any(k.arg is None for k in call.keywords):
        raise cfg.ConfigError(f"--agents item {item!r}: cannot read it; {form}")
    own = {}
    for keyword in call.keywords:
        try:
            own[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise cfg.ConfigError(f"--agents item {item!r}: {keyword.arg}={ast.unparse(keyword.value)} is not a literal "
                                  "(a number, a quoted string, True, False, None, or a list, tuple or dict of them); "
                                  f"{form}") from None
    label = f"{name}({', '.join(f'{k}={v!r}' for k, v in own.items())})" if own else ""
    return AgentSpec(name, {**common, **own}, label)


def check_common_kwargs(agents: list[AgentSpec], common: dict) -> None:
    """--agent-kwargs goes to every agent: one whose constructor does not name one of them (an agent
    may swallow unknown keywords silently) is a ConfigError saying so, and how to give an agent its
    own values."""
    from gym_ctxbandits.experiment import import_agents

    for name in dict.fromkeys(spec.name for spec in agents):
        names = import_agents().base.hyperparameter_names(name)
        if bad := [key for key in common if key not in names]:
            raise cfg.ConfigError(f"--agent-kwargs applies to every agent, and {name!r} has no hyper-parameter "
                                  f"{', '.join(map(repr, bad))} (its own: {', '.join(names)}); give one agent its own "
                                  "values in --agents instead, e.g. --agents \"LinUCB(alpha=0.5),LinTS\"")


def comparison_from_args(args) -> cfg.Comparison:
    """The comparison of a config file (if given) with command-line flags taking precedence."""
    if args.config:
        comp = cfg.load(args.config)
    elif args.env and args.agents:
        comp = cfg.Comparison(envs=[], agents=[])
    else:
        raise cfg.ConfigError("give --config FILE, or both --env and --agents")
    if args.env:
        comp.envs = [EnvSpec(e, _kwargs(args.env_kwargs, "--env-kwargs")) for e in args.env.split(",")]
    comp.imports = list(dict.fromkeys([*comp.imports, *args.imports]))
    if args.agents:
        common = _kwargs(args.agent_kwargs, "--agent-kwargs")
        comp.agents = [agent_spec(a, common) for a in split_list(args.agents, "--agents")]
        if common:
            import_modules(comp.imports)                # the user's agents, to look up their hyper-parameters
            check_common_kwargs(comp.agents, common)
    elif args.agent_kwargs:
        raise cfg.ConfigError("--agent-kwargs applies to the agents of --agents; with a config file, give each agent "
                              "its kwargs there")
    comp.rerun = args.rerun
    for key in ("horizon", "seeds", "log_every", "batch", "out", "backend", "workers", "address", "device"):
        value = getattr(args, key)
        if value is not None:
            setattr(comp, key, seed_list(value, "--seeds") if key == "seeds" else value)
    comp.ray = {**comp.ray, **ray_options(args)}
    comp.feedback = feedback_from_args(args, comp.feedback)
    if comp.out is None:          # results/<the env's name>, or results/comparison for several: said on stderr
        names = {e.id.rpartition("/")[2].rpartition(":")[2] for e in comp.envs}
        comp.out = f"results/{names.pop() if len(names) == 1 else 'comparison'}"
        print(f"ctxbandits run: the results go to {comp.out} (--out, or `out` in the config, chooses the folder)",
              file=sys.stderr)
    from gym_ctxbandits.compare import check_device

    comp.device = check_device(comp.device, "--device", cluster=comp.backend == "ray")
    return comp


FEEDBACK_FLAGS = {"delay": "--delay", "window": "--window", "default_reward": "--default-reward",
                  "conversions": "--conversions", "feedback_every": "--feedback-every", "batch_grid": "--batch-grid"}


def feedback_from_args(args, feedback):
    """The comparison's feedback model (gym_ctxbandits.delays.Feedback): the config's, with the flags
    given taking precedence field by field; a bad value is a ConfigError of one line."""
    from dataclasses import asdict

    from gym_ctxbandits.delays import Feedback

    given = {key: value for key in FEEDBACK_FLAGS    # an unset flag is None (--conversions: False), a given 0 counts
             if (value := getattr(args, key, None)) is not None and value is not False}
    if not given:
        return feedback
    try:
        return Feedback.of({**(asdict(feedback) if feedback else {}), **given})
    except ValueError as err:
        flags = ", ".join(FEEDBACK_FLAGS[k] for k in given)
        raise cfg.ConfigError(f"{flags}: {err}") from None


def ray_options(args) -> dict:
    """The Ray backend's options given as flags (ray_backend.RayOptions), for a comparison's `ray`."""
    flags = {"code": args.ray_code, "cpus_per_unit": args.cpus_per_unit, "gpus_per_unit": args.gpus_per_unit,
             "max_in_flight": args.max_in_flight}
    return {key: value for key, value in flags.items() if value is not None}


def run_comparison(comp: cfg.Comparison, band: str = "std", quiet: bool = False, log_scale: bool = False,
                   exclude=()):
    """Run a comparison into `comp.out` (resuming; `comp.rerun`: running every job again), draw its
    figures and write summary.md there.

    Returns (table, figure paths, summary markdown); `table.attrs["reused"]` counts the finished
    jobs reused. `ctxbandits run` and the paper scripts (scripts/_paper.py) both run through here.
    """
    from gym_ctxbandits.compare import run

    table = run(comp.envs, comp.agents, seeds=comp.seeds, horizon=comp.horizon, out=comp.out, backend=comp.backend,
                workers=comp.workers, address=comp.address, log_every=comp.log_every, batch=comp.batch,
                progress=not quiet, imports=comp.imports, device=comp.device, ray=comp.ray, rerun=comp.rerun,
                feedback=comp.feedback)
    return (table, *report(table, comp.out, band, log_scale, exclude))


def report(table, out, band: str = "std", log_scale: bool = False, exclude=()):
    """(figure paths, summary markdown) of a results table, both written to `out` (a folder or a
    URI: drawn in a local temporary folder, then copied there). The figures leave out the agents
    of `exclude` (plots.leave_out; the summary keeps every agent) and, with `log_scale`, draw the
    regret on a log scale."""
    import tempfile

    from gym_ctxbandits.plots import leave_out, plot_regret, plot_runtime
    from gym_ctxbandits.results import summary
    from gym_ctxbandits.store import UriPath, location

    out = location(out)
    if isinstance(out, UriPath):
        with tempfile.TemporaryDirectory() as tmp:
            paths, text = report(table, Path(tmp), band, log_scale, exclude)
            for path in paths + [Path(tmp, "summary.md")]:
                (out / path.name).write_bytes(path.read_bytes())
        return [out / p.name for p in paths], text
    shown = leave_out(table, exclude)
    paths = plot_regret(shown, out, band, log_scale) + plot_runtime(shown, out)
    text = summary(table)
    (out / "summary.md").write_text(text + "\n")
    return paths, text


def cmd_run(args) -> int:
    comp = comparison_from_args(args)
    exclude = split_list(args.exclude or "", "--exclude")
    start = time.perf_counter()
    table, paths, text = run_comparison(comp, args.band, args.quiet, args.log_scale, exclude)
    jobs, reused = table.groupby(["env", "env_kwargs", "agent", "seed"]).ngroups, table.attrs.get("reused", 0)
    print(text)
    print(f"\n{len(table)} rows in {comp.out}/ ({time.perf_counter() - start:.1f} s; {jobs - reused} jobs run, "
          f"{reused} finished ones reused{', --rerun runs them again' if reused else ''}); "
          f"figures: {', '.join(p.name for p in paths)}")
    return 0


def cmd_plot(args) -> int:
    from gym_ctxbandits.results import load_results

    import_modules(args.imports)
    exclude = split_list(args.exclude or "", "--exclude")
    paths, text = report(load_results(args.results), args.results, args.band, args.log_scale, exclude)
    print(text)
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def cmd_list(args) -> int:
    """Print the registries: this package's env ids, the other envs registered (by --import modules
    or installed packages; gymnasium's own are left out), and every agent name."""
    import gymnasium as gym

    import gym_ctxbandits
    from gym_ctxbandits.experiment import import_agents
    from gym_ctxbandits.registration import other_env_ids

    import_modules(args.imports)
    agents = import_agents()
    print("Environments (id: paper and section, see docs/papers.md; default horizon):")
    for name, (_, horizon, _, paper) in gym_ctxbandits.ENVIRONMENTS.items():
        print(f"  CtxBandit/{name}-v0: {paper}; T={horizon}")
    if others := other_env_ids():
        print("\nOther environments (id: entry point; default horizon):")
        for env_id in others:
            spec = gym.spec(env_id)
            print(f"  {env_id}: {spec.entry_point}; T={spec.max_episode_steps}")
    print("\nAgents:")
    for name in sorted(agents.REGISTRY):
        print(f"  {name}")
    return 0


def cmd_log(args) -> int:
    from gym_ctxbandits.experiment import import_agents
    from gym_ctxbandits.feedback import log

    import_modules(args.imports)
    agent = import_agents().make(args.agent, seed=args.seed, **_kwargs(args.agent_kwargs, "--agent-kwargs"))
    fb = log(args.env, agent, args.rounds, args.seed, out=args.out, draws=args.draws,
             env_kwargs=_kwargs(args.env_kwargs, "--env-kwargs"))
    truth = "with" if fb["expected_reward"] is not None else "without"
    print(f"{args.rounds} rounds of {args.agent} on {args.env} ({truth} expected rewards) in {args.out}")
    return 0


def cmd_ope(args) -> int:
    import copy

    from gym_ctxbandits import feedback, ope
    from gym_ctxbandits.experiment import import_agents

    import_modules(args.imports)
    fb = feedback.read(args.log)
    meta = fb["meta"]
    known = {name.upper(): name for name in [*ope.ESTIMATORS, "Replay"]}
    names = [e.strip().upper() for e in args.estimators.split(",")]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"unknown estimator {', '.join(unknown)}; choose from {', '.join(known.values())}")
    names = [known[n] for n in names]
    env = args.env or meta.get("env")
    if env is None:
        raise ValueError(f"{args.log} names no env to train the target on (it was not written by `ctxbandits log`): "
                         "give --env and --env-kwargs")
    env_kwargs = _kwargs(args.env_kwargs, "--env-kwargs") if args.env or args.env_kwargs else meta.get("env_kwargs", {})
    feedback.check_env(fb, env, env_kwargs)
    target = import_agents().make(args.target, seed=args.seed, **_kwargs(args.target_kwargs, "--target-kwargs"))
    train_seed = meta.get("seed", 0) if args.train_seed is None else args.train_seed
    feedback.train(target, env, args.train_rounds, train_seed, env_kwargs)
    learner = copy.deepcopy(target)                 # Replay's copy keeps learning on the log
    pi = feedback.target_probs(target, fb, args.draws)
    fixed = [n for n in names if n != "Replay"]
    given = {"Switch-DR": {"tau": args.switch_tau}, "DRos": {"lam": args.dros_lambda}}
    options = {name: kw for name, kw in given.items() if name in fixed and next(iter(kw.values())) is not None}
    estimates = ope.evaluate(fb, pi, fixed, clip=args.clip, refit=args.refit, fit=args.fit, options=options,
                             alpha=args.alpha, n_bootstrap=args.n_bootstrap, seed=args.seed) if fixed else []
    if "Replay" in names:
        estimates.insert(names.index("Replay"), ope.replay(fb["reward"], fb["action"], fb["pscore"], learner,
                                                           context=fb["context"], rejection=args.replay_rejection,
                                                           alpha=args.alpha, seed=args.seed))
    level = f"{100 * (1 - args.alpha):g}%"
    print(f"{args.target} (trained {args.train_rounds} rounds, then frozen) on {fb['n_rounds']} rounds logged by "
          f"{meta.get('agent')} on {meta.get('env')}\n")
    print(f"| estimator | value | {level} CI |\n|---|---|---|")
    for est in estimates:
        name = est.estimator
        if isinstance(est, ope.ReplayEstimate):
            name += f" (keeps learning; {est.n_kept} rounds kept)"
        print(f"| {name} | {est.value:.4f} | [{est.low:.4f}, {est.high:.4f}] |")
    if fb["expected_reward"] is not None:
        print(f"| truth (frozen target) | {feedback.true_value(fb, pi):.4f} | |")
    if fixed != ["DM"] and fb["pscore"] is not None:
        ess, largest = ope.effective_sample_size(fb["action"], fb["pscore"], pi)
        print(f"\nimportance weights: effective sample size {ess:.0f} of {fb['n_rounds']} rounds, "
              f"largest {largest:.3g}")
    tuned = [f"{est.estimator} {'tau' if est.estimator == 'Switch-DR' else 'lambda'} {est.tuned:.4g}"
             for est in estimates if est.tuned is not None]
    if tuned:
        print(f"chosen on this log (least estimated MSE bound; --switch-tau, --dros-lambda to set): {', '.join(tuned)}")
    return 0


def add_run_options(parser: argparse.ArgumentParser, backend: str | None = None) -> None:
    """The options of how and where a comparison runs, shared by `ctxbandits run` and the paper scripts."""
    parser.add_argument("--seeds", help="N: seeds 0..N-1; A:B: seeds A..B-1 (e.g. 1000:1010, fresh seeds); "
                        "3,7,11: those seeds")
    parser.add_argument("--horizon", type=int, help="rounds per run (T; default: each env's registered T, its "
                        "paper's, as `ctxbandits list` shows it)")
    parser.add_argument("--log-every", type=int, help="keep a row every k rounds (cumulative values stay exact)")
    parser.add_argument("--batch", type=int, help="seeds per batched run of a vector env and a batched agent "
                        "(default 10; 1: the plain loop for every job)")
    parser.add_argument("--out", help="results folder, or a URI every Ray node reaches (s3://bucket/x, gs://..., "
                        "file:///mnt/shared/x; needs its fsspec library, e.g. s3fs); default results/<the env's "
                        "name>, results/comparison for several envs")
    parser.add_argument("--backend", choices=["inprocess", "processes", "ray"], default=backend)
    parser.add_argument("--workers", type=int, help="processes for --backend processes (default: all cores)")
    parser.add_argument("--address", help="Ray cluster for --backend ray: auto, HOST:PORT (the head), ray://HOST:10001 "
                        "(Ray Client) (default: RAY_ADDRESS, else start a local Ray)")
    parser.add_argument("--ray-code", choices=["ship", "installed"], help="ship (default): the Ray workers get this "
                        "machine's gym-ctxbandits and --import modules; installed: the nodes' own install runs (it "
                        "must be this version and code)")
    parser.add_argument("--cpus-per-unit", type=float, help="CPUs a Ray task (a unit of work) asks for (default 1)")
    parser.add_argument("--gpus-per-unit", type=float, help="GPUs a Ray task on --device cuda asks for (default 1; "
                        "0.25: four units share a GPU)")
    parser.add_argument("--max-in-flight", type=int, help="Ray tasks submitted and not yet collected (default: "
                        "twice the cluster's CPU slots, at least 16)")
    parser.add_argument("--device", help="torch device of the neural agents: cpu (default), cuda, cuda:N, mps, or "
                        "auto (cuda when available); numpy agents ignore it, an agent's own device kwarg wins")
    parser.add_argument("--band", choices=["std", "se"], default="std", help="error band of the regret plot")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def add_feedback_options(parser: argparse.ArgumentParser) -> None:
    """Delayed, censored and batched feedback (gym_ctxbandits.delays; docs/delayed.md)."""
    group = parser.add_argument_group("delayed and batched feedback (regret still counts when the agent acts)")
    group.add_argument("--delay", metavar="SPEC", help="rounds before a reward reaches the agent: fixed:D, "
                       "geometric:MEAN (or geometric:p=P), uniform:HIGH, uniform:LOW:HIGH, pareto:ALPHA:SCALE, "
                       "reward:MAX:MIN (good arms report sooner), or none (no delay, as without the flag)")
    group.add_argument("--window", type=int, metavar="M", help="a reward later than M rounds is never delivered "
                       "(the feedback model's window; an OTF agent's own window is its m, e.g. \"OTFLinUCB(m=500)\")")
    group.add_argument("--default-reward", type=float, metavar="R", help="deliver R at the end of the window instead "
                       "of a late reward (Personalizer's default reward)")
    group.add_argument("--conversions", action="store_true", help="only positive rewards are ever revealed")
    group.add_argument("--feedback-every", type=int, metavar="B", help="the agent learns every B rounds (batched "
                       "updates; not the neural agents' update_every)")
    group.add_argument("--batch-grid", metavar="KIND:M", help="the agent learns at the ends of M batches: "
                       "arithmetic:M, geometric:M or minimax:M (Gao et al. 2019)")


def add_plot_options(parser: argparse.ArgumentParser) -> None:
    """The figures' options, shared by `ctxbandits run` and `ctxbandits plot`."""
    parser.add_argument("--log", "--log-scale", dest="log_scale", action="store_true",
                        help="draw the cumulative regret (a replay's reward) on a log scale")
    parser.add_argument("--exclude", metavar="AGENTS", help="comma-separated agent labels to leave out of the "
                        "figures, e.g. Random (the summary keeps them)")


def add_import_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first, so the agents and envs it registers can be named (repeatable; a "
                        "module name importable from this folder, or a .py file)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxbandits", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a comparison (resumes an interrupted one), then plot it")
    run.add_argument("--config", help="a .toml or .yaml comparison config (flags override its values)")
    run.add_argument("--env", help="comma-separated env ids, e.g. CtxBandit/Logistic-v0")
    run.add_argument("--env-kwargs", help='JSON kwargs for the envs, e.g. \'{"dim": 10}\'')
    run.add_argument("--agents", help="comma-separated agent names, each with its own hyper-parameters if any, e.g. "
                     "LinUCB,LinTS or \"LinUCB(alpha=0.5),LinUCB(alpha=2),LinTS\" (labelled so in tables and plots)")
    run.add_argument("--agent-kwargs", help="JSON kwargs for every agent of --agents (all of them; an agent's own "
                     "values in --agents win)")
    add_run_options(run)
    add_feedback_options(run)
    run.add_argument("--rerun", action="store_true", help="run every job again, even those whose finished files "
                     "(same spec, data and code) are in --out")
    add_plot_options(run)
    run.set_defaults(func=cmd_run)
    plot = sub.add_parser("plot", help="plot the results folder of a comparison")
    plot.add_argument("results")
    plot.add_argument("--band", choices=["std", "se"], default="std")
    add_plot_options(plot)
    plot.set_defaults(func=cmd_plot)
    lst = sub.add_parser("list", help="list environment ids and agent names")
    lst.set_defaults(func=cmd_list)
    lg = sub.add_parser("log", help="log a behaviour agent's bandit feedback (with propensities) to Parquet")
    lg.add_argument("--env", required=True, help="env id, e.g. CtxBandit/Linear-v0")
    lg.add_argument("--env-kwargs", help="JSON kwargs for the env")
    lg.add_argument("--agent", required=True, help="behaviour agent name, e.g. epsilon-greedy")
    lg.add_argument("--agent-kwargs", help="JSON kwargs for the agent")
    lg.add_argument("--rounds", type=int, required=True, help="rounds to log")
    lg.add_argument("--seed", type=int, default=0, help="episode seed (and the agent's seed)")
    lg.add_argument("--draws", type=int, help="Monte-Carlo copies behind a sampling agent's action_probs")
    lg.add_argument("--out", required=True, help="the Parquet file to write")
    lg.set_defaults(func=cmd_log)
    op = sub.add_parser("ope", help="estimate a target policy's value from a log of `ctxbandits log`")
    op.add_argument("log", help="the Parquet file of `ctxbandits log`")
    op.add_argument("--target", required=True, help="target agent name, e.g. LinUCB")
    op.add_argument("--target-kwargs", help="JSON kwargs for the target")
    op.add_argument("--env", help="env the target trains on (default: the log's own); its arms and features must "
                    "match the log's")
    op.add_argument("--env-kwargs", help="JSON kwargs of the target's env (default: the log's own)")
    op.add_argument("--train-rounds", type=int, default=0, help="rounds the target plays on the env before "
                    "it is frozen (default 0: as constructed)")
    op.add_argument("--train-seed", type=int, help="episode seed of that training (default: the log's seed)")
    op.add_argument("--estimators", default=",".join(["IPS", "SNIPS", "DM", "DR", "SNDR"]),
                    help="comma-separated, of IPS, SNIPS, DM, DR, SNDR, Switch-DR, DRos and Replay (a copy of the trained "
                    "target keeps learning on the rounds of a uniformly random log where it picks the logged arm)")
    op.add_argument("--replay-rejection", action="store_true", help="Replay on a non-uniform log: first keep each "
                    "round with probability min(pscore) / pscore")
    op.add_argument("--clip", type=float, help="cap on the importance weights")
    op.add_argument("--switch-tau", type=float, help="Switch-DR's largest importance weight kept (default: chosen on "
                    "the log by the estimated MSE bound; inf is DR)")
    op.add_argument("--dros-lambda", type=float, help="DRos's shrinkage lambda (default: chosen on the log by the "
                    "estimated MSE bound of Su et al. 2020; inf is DR)")
    op.add_argument("--refit", action="store_true", help="fit the reward model of DM and the DR family afresh on every "
                    "bootstrap resample, so their intervals hold its estimation error (one fit set per resample)")
    op.add_argument("--fit", choices=["sequential", "cross", "in-sample"], default="sequential", help="the DR family's "
                    "reward model: fitted on earlier rounds only (sequential, unbiased on any log), on the other blocks "
                    "of time (cross, unbiased on non-adaptive logs) or on every round (in-sample, biased towards DM)")
    op.add_argument("--alpha", type=float, default=0.05, help="the CIs' level is 1 - alpha")
    op.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples")
    op.add_argument("--draws", type=int, help="Monte-Carlo copies behind a sampling target's action_probs")
    op.add_argument("--seed", type=int, default=0, help="the target's and the bootstrap's seed")
    op.set_defaults(func=cmd_ope)
    for command in (run, plot, lst, lg, op):
        add_import_option(command)
    from gym_ctxbandits.bench.cli import add_bench_parser
    add_bench_parser(sub, add_import_option)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (cfg.ConfigError, OSError, KeyError, ValueError) as err:
        print(f"ctxbandits: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:                      # a user's module, or another package's top-level `agents`
        print(f"ctxbandits: error: {err}", file=sys.stderr)
        return 2
    except FloatingPointError as err:               # an agent diverged: its message names the setting to lower
        print(f"ctxbandits: error: {err}", file=sys.stderr)
        return 2
    except (WorkerDied, ClusterError) as err:
        print(f"ctxbandits: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ctxbandits: interrupted; the finished jobs' files are kept: run the same command again to resume "
              "(finished jobs are not rerun)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
