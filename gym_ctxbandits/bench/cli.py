"""`ctxbandits bench`: run agents on a suite's report seeds, and write their scorecard.

    ctxbandits bench run --agents LinUCB,LinTS --out results/bench
    ctxbandits bench run --import my_agent.py --agents MyAgent --out results/bench
    ctxbandits bench report results/bench --baseline LinUCB
    ctxbandits bench tune --agents LinUCB --budget 8 --out results/tune
    ctxbandits bench tune --agents LinUCB --budget 6 --sampler halton --out results/tune --ship
    ctxbandits bench run --agents LinUCB --tuned results/tune/tuned.json --out results/bench-tuned
    ctxbandits bench run --agents GLM-TSL --track glm --out results/bench-glm
    ctxbandits bench tune --agents GLM-TSL --budget 6 --sampler halton --track glm --out results/tune-glm
    ctxbandits bench run --agents GLM-TSL --track glm --tuned shipped --out results/bench-glm-tuned
    ctxbandits bench regen --agents Random,LinUCB
    ctxbandits bench regen --tuned shipped --agents Random,LinUCB
    ctxbandits bench suites
    ctxbandits bench verify --agents LinUCB,NeuralUCB
"""

from __future__ import annotations

import json
import time
from pathlib import Path


def chosen_suite(given: str | None, out=None, study: bool = False, tuned: str | None = None):
    """The suite a `bench` command plays: `--suite` when given; else the one its --out folder holds
    (a `bench run` folder's bench.json, a `bench tune` study's tuned.json), so that a folder begun
    under one default resumes on it after the default changed (bakeoff-v1 until 0.13.0); else that
    of a --tuned file; else DEFAULT."""
    from gym_ctxbandits.bench import tune
    from gym_ctxbandits.bench.run import MANIFEST, suite_of
    from gym_ctxbandits.bench.suite import DEFAULT, load

    if given:
        return load(given)
    held = Path(out) / (tune.FILE if study else MANIFEST) if out else None
    if held and held.exists() and not study:
        return suite_of(json.loads(held.read_text()))
    source = held if held and held.exists() else tuned if tuned not in (None, "shipped") else None
    if source:                                              # a tuned file: a study's, or --tuned's
        record = tune.read(source)
        return load(record.get("suite_file") or record["suite"])
    return load(DEFAULT)


def cmd_run(args) -> int:
    from gym_ctxbandits.bench import tune
    from gym_ctxbandits.bench.run import run_suite
    from gym_ctxbandits.bench.suite import tuned_track

    suite = chosen_suite(args.suite, args.out, tuned=args.tuned)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    tuned = None
    if args.tuned:
        tuned = tune.played(suite, args.track or "report") if args.tuned == "shipped" else tune.read(args.tuned)
    start = time.perf_counter()
    run_suite(suite, agents, args.out, quick=args.quick, imports=args.imports, backend=args.backend,
              workers=args.workers, address=args.address, device=args.device, batch=args.batch,
              progress=None if args.quiet else print, tuned=tuned, track=args.track)
    track = (f"{tuned_track(args.track)} track, budget {tuned['budget']}" if tuned else
             f"{'quick' if args.quick else args.track or 'report'} track")
    print(f"{', '.join(agents)} on {suite.key} ({track}) in {args.out}/ "
          f"({time.perf_counter() - start:.1f} s); next: ctxbandits bench report{imports_hint(args.imports)} {args.out}")
    return 0


def cmd_tune(args) -> int:
    from agents.params import parse_space
    from gym_ctxbandits.bench import tune
    suite = chosen_suite(args.suite, args.out, study=True)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    space = parse_space(args.space) if args.space else None
    if args.replace and not args.ship:
        raise ValueError("--replace replaces an agent's shipped tuned configuration: give it with --ship")
    if args.ship:
        package_file = tune.shippable(suite, args.budget, args.quick, args.track)   # refused now, not after the study
    start = time.perf_counter()
    record = tune.tune(suite, agents, args.budget, args.out, quick=args.quick, sampler=args.sampler, space=space,
                       imports=args.imports, backend=args.backend, workers=args.workers, address=args.address,
                       device=args.device, batch=args.batch, progress=None if args.quiet else print,
                       track=args.track)
    for name in agents:
        entry = record["agents"][name]
        print(f"{name}: {entry['config']} (objective {entry['objective']:.4f}; defaults {entry['default_objective']:.4f})")
    on = "" if args.track == "report" else f" --track {args.track}"
    print(f"{len(agents)} agent(s), budget {args.budget}, on {suite.key}'s tune seeds{on and f' ({args.track} track)'} "
          f"in {args.out}/{tune.FILE} ({time.perf_counter() - start:.1f} s)" + (
              "" if args.ship else f"; next: ctxbandits bench run{imports_hint(args.imports)} --agents "
                                   f"{','.join(agents)}{on} --tuned "
                                   f"{args.out}/{tune.FILE} --out DIR"))
    if args.ship:
        fate = tune.ship(record, suite, agents, replace=args.replace)
        print(f"shipped into {package_file}: {', '.join(f'{a} ({f})' for a, f in fate.items())}")
        if changed := [a for a, f in fate.items() if f != "unchanged"]:
            print(f"next: ctxbandits bench regen --tuned shipped --suite {suite.key}{on} --agents {','.join(changed)} (their "
                  "tuned-track references), then python scripts/make_tables.py (the docs' tables)")
    return 0


def report_folder(args) -> str:
    """`bench report`'s folder: an argument, as `ctxbandits plot` takes it, or --out (both: the same)."""
    given = [f for f in (args.folder, args.out) if f]
    if not given:
        raise ValueError("bench report needs the folder of `ctxbandits bench run`: `ctxbandits bench report FOLDER`")
    if len(given) == 2 and Path(given[0]).resolve() != Path(given[1]).resolve():
        raise ValueError(f"two folders given, {given[0]} and --out {given[1]}: give one of them")
    return given[0]


def names(text: str | None) -> list[str]:
    return [a.strip() for a in (text or "").split(",") if a.strip()]


def imports_hint(imports) -> str:
    """The --import options of a command, for the `next:` command it prints."""
    return "".join(f" --import {m}" for m in imports or ())


def cmd_report(args) -> int:
    from gym_ctxbandits.bench.report import write
    from gym_ctxbandits.user_modules import import_modules

    out = report_folder(args)
    import_modules(args.imports)
    paths = write(out, alpha=args.alpha, references=None if args.no_references else args.references or "auto",
                  baseline=args.baseline, highlight=names(args.highlight),
                  bakeoff_agents=names(args.bakeoff_agents) or None)
    print("wrote " + ", ".join(map(str, paths)))
    return 0


def cmd_regen(args) -> int:
    from gym_ctxbandits.bench.references import folder, regen
    from gym_ctxbandits.bench.suite import tuned_track

    suite = chosen_suite(args.suite, tuned=args.tuned)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()] if args.agents else None
    track = tuned_track(args.track) if args.tuned else args.track
    tuned_file = None if args.tuned in (None, "shipped") else args.tuned      # None: the package's (tune.played)
    dest = args.dest or folder(suite, track)
    start = time.perf_counter()
    manifest = regen(suite, agents, dest, args.work, progress=None if args.quiet else print, track=track,
                     reuse=not args.rerun_all, tuned_file=tuned_file,
                     imports=args.imports,
                     backend=args.backend, workers=args.workers, address=args.address, device=args.device,
                     batch=args.batch)
    built = agents or list(manifest["agents"])
    print(f"references of {', '.join(built)} on {suite.key} ({track} track) in {dest}/ ({time.perf_counter() - start:.1f} s)")
    return 0


HORIZON_GIVEN = "; an agent that reads a horizon is given the cell's"


def cmd_suites(args) -> int:
    from gym_ctxbandits.bench import tune
    from gym_ctxbandits.bench.suite import DEFAULT, earlier, load, markdown_table, shipped, tuned_track

    print(f"default suite: {DEFAULT} (since gym-ctxbandits 0.14.0; bakeoff-v1 before; --suite names another)\n")
    for key in shipped():
        suite = load(key)
        print(f"{key}: {len(suite.cells)} cells; report seeds {suite.report_seeds[0]}..{suite.report_seeds[-1]}, "
              f"tune seeds {suite.tune_seeds[0]}..{suite.tune_seeds[-1]}; quick track T={suite.quick_horizon} on "
              f"{suite.quick_seeds} seeds{HORIZON_GIVEN if suite.horizon_to_agents else ''}")
        for name, track in suite.tracks.items():
            cut = ", ".join(f"{c} T={t:,}" for c, t in track.horizons.items())
            if len(track.horizons) + len(track.drop) == len(suite.cells) and len(set(track.horizons.values())) == 1:
                cut = f"every cell kept T={next(iter(track.horizons.values())):,}"
            print(f"  track {name}: {track.description} Cut: {cut or 'none'}; dropped: {', '.join(track.drop) or 'none'}.")
        for name, file in tune.files(suite).items():
            twin = tuned_track(name)
            print(f"  tuned on the {name} track (budget {file['budget']}, played on the {twin} track): "
                  f"{', '.join(file['agents']) or 'none'}.")
        same = next((old.key for old in reversed(earlier(suite)) if old.cells == suite.cells), None)
        if same:
            print(f"\nThe cells of {key}: those of {same}, in its table above.\n")
            continue
        alike = [k for k in shipped() if k != key and any(o.key == key and o.cells == suite.cells
                                                          for o in earlier(load(k)))]
        print(f"\nThe cells of {key}{''.join(f' (and of {k})' for k in alike)}:\n\n{markdown_table(suite)}\n")
    return 0


def cmd_verify(args) -> int:
    from collections import defaultdict

    from gym_ctxbandits.bench import reproduce

    rows = reproduce.every_row(args.checkpoints) if args.all else reproduce.sample(args.checkpoints)
    agents = set(names(args.agents))
    rows = [r for r in rows if (not args.suite or r[0].key == args.suite) and (not args.track or r[1] == args.track)
            and (not agents or r[2] in agents)]
    if not rows:
        raise ValueError("no shipped reference rows match --suite, --track and --agents (the sample has one cell per "
                         "agent and folder: give --all for every cell)")
    print(f"kernels here: {reproduce.numerics()}; shipped rows made with {reproduce.SHIPPED_NUMERICS} unless their "
          "manifest says otherwise")
    results = reproduce.verify(rows, progress=None if args.quiet else print)
    skipped = [r for r in results if "skipped" in r]
    results = [r for r in results if "skipped" not in r]
    tally = defaultdict(lambda: [0, 0, 0, 0.0])       # folder -> [runs, rows, differing rows, seconds]
    for r in results:
        t = tally[r["folder"]]
        t[0] += 1
        t[1] += r["rows"]
        t[2] += len(r["differences"])
        t[3] += r["seconds"]
    print("\n| references | runs | rows | rows that differ | seconds |\n|---|---|---|---|---|")
    print("\n".join(f"| {k} | {v[0]} | {v[1]} | {v[2]} | {v[3]:.1f} |" for k, v in sorted(tally.items())))
    bad = [r for r in results if r["differences"]]
    for r in bad:
        how = "within the tolerance across kernels" if r["across"] else "bit for bit"
        print(f"{r['folder']} {r['agent']} {r['cell']}: {len(r['differences'])} of {r['rows']} rows not {how}; "
              f"the first: {r['differences'][0]}")
    bit = sum(not r["across"] for r in results)
    print(f"{len(results) - len(bad)} of {len(results)} runs reproduce ({bit} compared bit for bit, "
          f"{len(results) - bit} across kernels)" + (f"; {len(skipped)} not run, their datasets not at hand "
                                                     f"(the first: {skipped[0]['skipped']})" if skipped else ""))
    return 1 if bad else 0


def _add_run_options(parser) -> None:
    """How `bench run` and `bench regen` play the suite: backend, workers, cluster, device, batch, output."""
    parser.add_argument("--backend", choices=["inprocess", "processes", "ray"], default="inprocess")
    parser.add_argument("--workers", type=int, help="processes for --backend processes (default: all cores)")
    parser.add_argument("--address", help="Ray cluster for --backend ray (default: RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--device", default="cpu", help="torch device of the neural agents: cpu, cuda, cuda:N, mps, auto")
    parser.add_argument("--batch", type=int, default=10, help="seeds per batched run (1: the plain loop)")
    parser.add_argument("--quiet", action="store_true", help="no line per cell")


def add_bench_parser(sub, add_import_option) -> None:
    """Add `bench` and its subcommands to the `ctxbandits` subparsers `sub`."""
    from gym_ctxbandits.bench.suite import DEFAULT

    default = f"default: the suite of --out's results if it holds some, else {DEFAULT}"
    bench = sub.add_parser("bench", help="the bake-off: run agents on a versioned suite, score them against the others")
    commands = bench.add_subparsers(dest="bench_command", required=True)
    run = commands.add_parser("run", help="run agents (and Random) on every cell of the suite's report seeds; resumes")
    run.add_argument("--agents", required=True, help="comma-separated agent names, e.g. LinUCB,LinTS")
    run.add_argument("--suite", help=f"a shipped suite NAME-vVERSION or a .toml path ({default})")
    run.add_argument("--quick", action="store_true", help="the quick track: a few rounds on two seeds (a smoke run)")
    run.add_argument("--out", required=True, help="the scorecard folder (agents are added to it one run at a time)")
    run.add_argument("--track", help="a named track of the suite file, e.g. glm: the same report seeds, some cells "
                                     "dropped or cut to stated shorter horizons (`bench suites` lists them)")
    run.add_argument("--tuned", help="the tuned track: play each agent's configuration of this file (`bench tune`'s "
                                     "tuned.json, or 'shipped': the package's, one per agent per suite, those "
                                     "tuned on --track first)")
    _add_run_options(run)
    run.set_defaults(func=cmd_run)
    report = commands.add_parser("report", help="write scorecard.md, .json and .html: the folder's agents beside the "
                                                "shipped references of the zoo")
    report.add_argument("folder", nargs="?", help="a folder of `ctxbandits bench run` (or give it as --out)")
    report.add_argument("--out", help="the same folder, as `bench run` names it (either; both: the same folder)")
    report.add_argument("--baseline", help="an agent to set every other against, cell by cell: wins, ties and losses "
                                           "(also Holm-corrected) and the probability of improvement, e.g. LinUCB")
    report.add_argument("--highlight", help="comma-separated agents the HTML page's radar and profiles draw beside "
                                            "the new ones (default: the new ones and --baseline; else the best three)")
    report.add_argument("--bakeoff-agents", help="comma-separated agents of the Bake-off's wins - losses table (a "
                                                 "suite of the Bake-off's protocol, pmlb-v1; default: every agent)")
    report.add_argument("--alpha", type=float, default=0.05, help="level of the Wilcoxon test of wins and losses")
    report.add_argument("--references", help="a folder of reference results (default: the package's, for a shipped "
                                             "suite's report track)")
    report.add_argument("--no-references", action="store_true", help="the folder's agents only, no zoo")
    report.set_defaults(func=cmd_report)
    regen = commands.add_parser("regen", help="rebuild reference results: run agents on the report track, pack them")
    regen.add_argument("--agents", help="comma-separated agent names (default: those the references hold)")
    regen.add_argument("--suite", help=f"a shipped suite NAME-vVERSION or a .toml path (default {DEFAULT})")
    regen.add_argument("--dest", help="where the references go (default: the package's folder of the suite)")
    regen.add_argument("--track", default="report", help="the report track (default), 'tuned', a named track, e.g. "
                                                         "glm, or its tuned twin, e.g. glm-tuned")
    regen.add_argument("--tuned", help="the (track's) tuned twin: each agent's configuration of this file "
                                       "('shipped': the package's for the suite and track, the default of a tuned "
                                       "--track)")
    regen.add_argument("--work", help="keep the runs here, resumable (default: a temporary folder, removed after)")
    regen.add_argument("--rerun-all", action="store_true",
                       help="on a named track, run every cell (default: an agent with report-track references runs "
                            "only the cells that differ from the report track's, the others' rows copied from them)")
    _add_run_options(regen)
    regen.set_defaults(func=cmd_regen)
    tune = commands.add_parser("tune", help="choose one configuration per agent on the suite's tune seeds, the same "
                                            "budget for every agent; resumes")
    tune.add_argument("--agents", required=True, help="comma-separated agent names, e.g. LinUCB,LinTS")
    tune.add_argument("--budget", required=True, type=int, help="configurations per agent, its defaults one of them")
    tune.add_argument("--suite", help=f"a shipped suite NAME-vVERSION or a .toml path ({default})")
    tune.add_argument("--quick", action="store_true", help="the quick track's cells on the first tune seeds (a smoke run)")
    tune.add_argument("--track", default="report",
                      help="the report track's cells (default) or a named track's, e.g. glm, for agents that cannot "
                           "afford the report track; --ship then ships into that track's file")
    tune.add_argument("--out", required=True, help="the study's folder: its runs, tuned.json (and optuna.db)")
    tune.add_argument("--sampler", choices=["auto", "halton", "tpe"], default="auto",
                      help="halton: the defaults and a scrambled Halton design (fixed seed); tpe: Optuna's TPE "
                           "(fixed seed); auto: tpe when Optuna is installed")
    tune.add_argument("--space", help="search space of the one agent named, replacing its declared one: "
                                      "'lam=log:0.01:100,epsilon=uniform:0:0.5' (log, uniform, intlog, choice:A|B)")
    tune.add_argument("--ship", action="store_true",
                      help="then merge the agents' tuned configurations into the package's file of the (shipped) "
                           "suite, the tuned track's; refused unless the study fits it (budget, tune seeds, cells)")
    tune.add_argument("--replace", action="store_true",
                      help="with --ship: replace an agent's shipped configuration by another (its tuned-track "
                           "references go stale: rebuild them)")
    _add_run_options(tune)
    tune.set_defaults(func=cmd_tune)
    verify = commands.add_parser("verify", help="rerun shipped reference rows on this machine and compare them: bit "
                                                "for bit where it has their kernels, else within the stated tolerance")
    verify.add_argument("--suite", help="only this shipped suite (NAME-vVERSION)")
    verify.add_argument("--track", help="only this track (report, tuned, glm, glm-tuned, ...)")
    verify.add_argument("--agents", help="only these comma-separated agents")
    verify.add_argument("--all", action="store_true", help="every cell of every chosen agent, not the fixed sample")
    verify.add_argument("--checkpoints", type=int, default=2, help="logged checkpoints rerun per cell (default 2)")
    verify.add_argument("--quiet", action="store_true", help="no line per run")
    verify.set_defaults(func=cmd_verify)
    suites = commands.add_parser("suites", help="list the shipped suites and their cells")
    suites.set_defaults(func=cmd_suites)
    for command in (run, report, regen, tune):
        add_import_option(command)
