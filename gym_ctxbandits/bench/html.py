"""The scorecard as one self-contained HTML page: inline SVG and CSS drawn from numpy, no script,
no external file, so it opens offline and in any browser (tests/test_bench.py renders it in
headless Chromium, with 25 agents). Its parts: a radar chart of the IQM score by tag (the new agents
and those the user highlights), each cell's score of the new agents against the spread of the
zoo's, the overall score against the compute cost, rliable's performance profiles, the
wins-minus-losses matrix (scrolling inside its box), and the mean regret curves of every cell (the
new agents, the cell's three best zoo agents and Random, each with its spread over the seeds and a
legend). Every agent has a colour of its own, however many. Hovering a mark shows its value (SVG
<title>).
"""

from __future__ import annotations

from html import escape

import numpy as np

NEW = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]
ZOO = ["#8c8c8c", "#17becf", "#bcbd22", "#c5b0d5", "#98df8a", "#c49c94", "#aec7e8", "#f7b6d2", "#dbdb8d"]
GOLDEN = 137.50776      # degrees: successive hues of the generated colours as far apart as can be
RANDOM = "#000000"
BEST = 3               # zoo agents drawn beside the new ones in each cell's curves

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #222; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; }
p.note { color: #555; margin: 4px 0 10px; } .row { display: flex; gap: 28px; align-items: flex-start; flex-wrap: wrap; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 3px 8px; border: 1px solid #e3e3e3; text-align: right; }
th:first-child, td:first-child { text-align: left; } .legend span { margin-right: 14px; white-space: nowrap; }
.legend i { display: inline-block; width: 18px; height: 4px; margin-right: 5px; vertical-align: middle; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); gap: 10px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; } .new { font-weight: 600; }
.scroll { overflow: auto; max-width: 100%; max-height: 560px; border: 1px solid #ddd; }
.scroll table th { position: sticky; background: #fafafa; } .scroll tr:first-child th { top: 0; z-index: 1; }
.scroll th:first-child { left: 0; z-index: 2; }
"""


def palette(n: int, start: int = 0, saturation: int = 55) -> list[str]:
    """`n` colours none of which repeats: hues a golden angle apart, from the `start`-th on, at three
    lightnesses in turn (so that neighbours in the list differ in hue and in lightness)."""
    return [f"hsl({(i * GOLDEN) % 360:.1f},{saturation}%,{(38, 52, 66)[i % 3]}%)" for i in range(start, start + n)]


def colours(card: dict) -> dict[str, str]:
    """One colour per agent for the whole page, no two agents alike however many there are: the new
    agents bright (NEW, then generated), the zoo muted (ZOO, then generated), Random black."""
    new = card.get("new", card["agents"][1:])
    zoo = [a for a in card["agents"] if a not in new and a != "Random"]
    bright = NEW[:len(new)] + palette(max(0, len(new) - len(NEW)), saturation=85)
    muted = ZOO[:len(zoo)] + palette(max(0, len(zoo) - len(ZOO)), start=len(new), saturation=45)
    return {"Random": RANDOM, **dict(zip(new, bright)), **dict(zip(zoo, muted))}


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>")


def _points(xs, ys) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys))


def _fmt(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.2f}"


def ticks(low: float, high: float, n: int = 4) -> np.ndarray:
    """About `n` round numbers spanning [low, high] (1, 2 or 5 times a power of ten apart)."""
    if not high > low:
        return np.array([low])
    raw = (high - low) / n
    step = min((k * 10 ** np.floor(np.log10(raw)) for k in (1, 2, 5, 10)), key=lambda s: abs(s - raw))
    return np.arange(np.ceil(low / step) * step, high + step / 2, step)


def legend(card: dict, colour: dict, names=None) -> str:
    """A swatch and the name of each agent of `names` (default: every agent), the new ones bold."""
    new = set(card.get("new", []))
    items = [f'<span class="{"new" if a in new else ""}"><i style="background:{colour[a]}"></i>{escape(a)}</span>'
             for a in (card["agents"] if names is None else names)]
    return '<div class="legend">' + "".join(items) + "</div>"


def radar(card: dict, colour: dict, size: int = 440) -> str:
    """The IQM score on each tag, one spoke per tag, 0 at the centre and 1 at the rim, of the agents
    the card highlights (the new ones, those named, the baseline; else the best three), or of every
    agent on a card that names none: 25 polygons are unreadable."""
    tags = [t for t in card["aggregates"] if t != "overall"]
    c, r = size / 2, size / 2 - 70
    angles = -np.pi / 2 + 2 * np.pi * np.arange(len(tags)) / len(tags)
    body = []
    half = -np.pi / 2 + np.pi / len(tags)                                   # level labels between two spokes
    for level in (0.25, 0.5, 0.75, 1.0):
        body.append(f'<polygon points="{_points(c + level * r * np.cos(angles), c + level * r * np.sin(angles))}" '
                    f'fill="none" stroke="#ddd"/>')
        body.append(f'<text x="{c + level * r * np.cos(half) + 3:.1f}" y="{c + level * r * np.sin(half):.1f}" '
                    f'fill="#999">{level:g}</text>')
    for tag, a in zip(tags, angles):
        x, y = c + r * np.cos(a), c + r * np.sin(a)
        anchor = "middle" if abs(np.cos(a)) < 0.3 else ("start" if np.cos(a) > 0 else "end")
        body.append(f'<line x1="{c}" y1="{c}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        body.append(f'<text x="{c + (r + 14) * np.cos(a):.1f}" y="{c + (r + 14) * np.sin(a) + 4:.1f}" '
                    f'text-anchor="{anchor}">{escape(tag)}</text>')
    new = card.get("new", [])
    for agent in sorted(card.get("highlight") or card["agents"], key=lambda a: a in new):   # the new ones on top
        values = np.array([card["aggregates"][t]["iqm"][agent][0] for t in tags], float)
        v = np.nan_to_num(values, nan=0.0)
        xs, ys = c + v * r * np.cos(angles), c + v * r * np.sin(angles)
        fill, width = ("0.12", 2.5) if agent in new else ("0", 1.2)
        tip = escape(f"{agent}: " + ", ".join(f"{t} {_fmt(x)}" for t, x in zip(tags, values)))
        body.append(f'<polygon points="{_points(xs, ys)}" fill="{colour[agent]}" fill-opacity="{fill}" '
                    f'stroke="{colour[agent]}" stroke-width="{width}"><title>{tip}</title></polygon>')
    return _svg(size, size, body, "IQM score by tag")


def cell_bars(card: dict, colour: dict, width: int = 1120) -> str:
    """Per cell, the score of each new agent as a bar, over the other agents' range (grey band),
    each of them a tick and their median a dark tick; Random, 0 by definition, is left out."""
    new = card.get("new", [])
    zoo = [a for a in card["agents"] if a not in new and a != "Random"] or ["Random"]
    left, right, bar = 170, 40, 9
    row = 8 + bar * max(1, len(new))
    scale = lambda s: left + s * (width - left - right)
    body, y = [], 22
    for s in np.linspace(0, 1, 5):
        body.append(f'<line x1="{scale(s):.1f}" y1="14" x2="{scale(s):.1f}" y2="{22 + row * len(card["cells"])}" '
                    f'stroke="#eee"/><text x="{scale(s):.1f}" y="10" text-anchor="middle">{s:g}</text>')
    for cell_id, cell in card["cells"].items():
        rows = cell["agents"]
        scores = np.array([rows[a]["score"] for a in zoo], float)          # None or NaN: no score
        body.append(f'<text x="{left - 8}" y="{y + row / 2 + 4:.1f}" text-anchor="end">{escape(cell_id)}</text>')
        if np.isfinite(scores).any():
            low, high, mid = np.nanmin(scores), np.nanmax(scores), np.nanmedian(scores)
            body.append(f'<rect x="{scale(low):.1f}" y="{y + 2}" width="{max(scale(high) - scale(low), 1):.1f}" '
                        f'height="{row - 4}" fill="#e6e6e6"><title>{escape(f"zoo: {low:.2f} to {high:.2f}, median {mid:.2f}")}'
                        f'</title></rect>')
            for a, s in zip(zoo, scores):
                if np.isfinite(s):
                    body.append(f'<line x1="{scale(s):.1f}" y1="{y + 2}" x2="{scale(s):.1f}" y2="{y + row - 2}" '
                                f'stroke="{colour[a]}" stroke-width="1.5"><title>{escape(f"{a}: {s:.2f}")}</title></line>')
            body.append(f'<line x1="{scale(mid):.1f}" y1="{y}" x2="{scale(mid):.1f}" y2="{y + row}" stroke="#444" '
                        f'stroke-width="2"/>')
        for i, a in enumerate(new):
            s = rows[a]["score"]
            tip = escape(f"{a} on {cell_id}: score {_fmt(s)}, rank {rows[a]['rank']:g} of {len(card['agents'])}")
            if s is None or not np.isfinite(s):
                body.append(f'<text x="{scale(0) + 4:.1f}" y="{y + 4 + bar * (i + 1) - 1}">n/a</text>')
                continue
            body.append(f'<rect x="{scale(0):.1f}" y="{y + 4 + bar * i}" width="{max(scale(s) - scale(0), 1.5):.1f}" '
                        f'height="{bar - 2}" fill="{colour[a]}" fill-opacity="0.85"><title>{tip}</title></rect>')
        y += row
    return _svg(width, y + 6, body, "score per cell")


def curve(cell_id: str, cell: dict, lines: dict, colour: dict, width: int = 270, height: int = 180) -> str:
    """One cell's mean cumulative regret (the replay: clicks) against the round, with a legend below;
    `lines`: agent -> (rounds, means) or (rounds, means, standard deviations over the seeds), the
    latter drawn as a band of one standard deviation either side of the mean."""
    left, top, right, bottom = 46, 26, 10, 22
    per_row = 2
    key = 14 * -(-len(lines) // per_row)                                     # the legend's rows
    rounds = np.concatenate([line[0] for line in lines.values()])
    values = np.concatenate([line[1] + (line[2] if len(line) > 2 else 0) for line in lines.values()])
    x1 = max(rounds.max(), 1)
    y1 = max(np.nanmax(values), 1e-9) if np.isfinite(values).any() else 1.0
    sx = lambda r: left + np.asarray(r) / x1 * (width - left - right)
    sy = lambda v: top + (1 - np.clip(np.asarray(v) / y1, 0, 1)) * (height - top - bottom)
    measure = "clicks" if cell["measure"] == "reward" else "regret"
    body = [f'<text x="4" y="13" class="new">{escape(cell_id)}</text>',
            f'<text x="{width - right}" y="13" text-anchor="end" fill="#888">{measure}, T={cell["horizon"]:,}</text>',
            (f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
             'fill="none" stroke="#ccc"/>')]
    for v in ticks(0, y1):
        body.append(f'<text x="{left - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:g}</text>'
                    f'<line x1="{left}" y1="{sy(v):.1f}" x2="{width - right}" y2="{sy(v):.1f}" stroke="#f0f0f0"/>')
    for r in ticks(0, x1, 3):
        body.append(f'<text x="{sx(r):.1f}" y="{height - 8}" text-anchor="middle">{r:g}</text>')
    for agent, line in lines.items():                                      # the bands first, under every line
        if len(line) > 2 and np.any(line[2] > 0):
            r, m, sd = line
            xs = np.concatenate([sx(r), sx(r)[::-1]])
            ys = np.concatenate([sy(m + sd), sy(np.maximum(m - sd, 0))[::-1]])
            body.append(f'<polygon points="{_points(xs, ys)}" fill="{colour[agent]}" fill-opacity="0.12" '
                        f'stroke="none"><title>{escape(f"{agent}: mean ± one standard deviation over the seeds")}'
                        '</title></polygon>')
    for agent, (r, m, *_) in lines.items():
        dash = ' stroke-dasharray="4 3"' if agent == "Random" else ""
        body.append(f'<polyline points="{_points(sx(r), sy(m))}" fill="none" stroke="{colour[agent]}" '
                    f'stroke-width="1.8"{dash}><title>{escape(f"{agent}: {m[-1]:.1f} at round {r[-1]}")}</title>'
                    f'</polyline>')
    column = (width - 8) / per_row
    for i, agent in enumerate(lines):                                       # the legend, two to a row
        x, y = 4 + column * (i % per_row), height + 10 + 14 * (i // per_row)
        dash = ' stroke-dasharray="4 3"' if agent == "Random" else ""
        name = agent if len(agent) <= 20 else agent[:19] + "…"
        body.append(f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x + 16:.1f}" y2="{y - 4}" stroke="{colour[agent]}" '
                    f'stroke-width="2.5"{dash}/><text x="{x + 20:.1f}" y="{y}">{escape(name)}<title>{escape(agent)}'
                    '</title></text>')
    return _svg(width, height + key + 4, body, f"{measure} curves of {cell_id}")


def cost(card: dict, colour: dict, width: int = 560, height: int = 360) -> str:
    """Each agent's overall IQM score (its interval a vertical bar) against its CPU seconds per 1,000
    rounds on a log axis: the agents up and to the left score more for less. An agent with no
    recorded cost is left out; a label that would overlap another is too (the highlighted agents'
    first), its dot keeping its name on hover and its colour."""
    left, top, right, bottom = 50, 14, 16, 40
    iqm = card["aggregates"]["overall"]["iqm"]
    spent = {a: (card.get("cost", {}).get(a) or {}).get("cpu_seconds_per_1k_rounds") for a in card["agents"]}
    shown = [a for a in card["agents"] if spent[a] and spent[a] > 0 and iqm[a][0] is not None
             and np.isfinite(iqm[a][0])]
    body = [(f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
             'fill="none" stroke="#ccc"/>')]
    if shown:
        logs = np.log10([spent[a] for a in shown])
        lo, hi = np.floor(logs.min()), np.ceil(logs.max())
        hi = hi if hi > lo else lo + 1
        sx = lambda c: left + (np.log10(c) - lo) / (hi - lo) * (width - left - right)
        sy = lambda v: top + (1 - np.clip(v, 0, 1)) * (height - top - bottom)
        for e in np.arange(lo, hi + 1):
            body.append(f'<line x1="{sx(10 ** e):.1f}" y1="{top}" x2="{sx(10 ** e):.1f}" y2="{height - bottom}" '
                        f'stroke="#f0f0f0"/><text x="{sx(10 ** e):.1f}" y="{height - bottom + 14}" '
                        f'text-anchor="middle">{10 ** e:g}</text>')
        for v in (0, 0.25, 0.5, 0.75, 1):
            body.append(f'<text x="{left - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        new, bold = set(card.get("new", [])), card.get("highlight") or []
        labels = {}                                  # agent -> its label's box; one that would overlap is left out
        for a in sorted(shown, key=lambda a: (a not in bold, card["agents"].index(a))):
            x, y = sx(spent[a]), sy(iqm[a][0])
            box = (x + 5, y - 14, x + 7 + 6 * len(a), y - 2)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in labels.values()):
                labels[a] = box
        for a in sorted(shown, key=lambda a: a in new):
            x, (v, low, high) = sx(spent[a]), iqm[a]
            if low is not None and np.isfinite(low):
                body.append(f'<line x1="{x:.1f}" y1="{sy(low):.1f}" x2="{x:.1f}" y2="{sy(high):.1f}" '
                            f'stroke="{colour[a]}" stroke-width="1.5"/>')
            tip = escape(f"{a}: IQM score {_fmt(v)} [{_fmt(low)}, {_fmt(high)}], {spent[a]:.3g} CPU-s per 1,000 rounds")
            body.append(f'<circle cx="{x:.1f}" cy="{sy(v):.1f}" r="{5 if a in new else 3.5}" fill="{colour[a]}" '
                        f'stroke="#fff"><title>{tip}</title></circle>')
        for a, box in labels.items():
            body.append(f'<text x="{box[0] + 1:.1f}" y="{box[3] - 2:.1f}" class="{"new" if a in new else ""}" '
                        f'font-size="10">{escape(a)}</text>')
    body.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 6}" text-anchor="middle">CPU seconds per '
                '1,000 rounds (log)</text>')
    body.append(f'<text x="12" y="{(top + height - bottom) / 2:.1f}" text-anchor="middle" '
                f'transform="rotate(-90 12 {(top + height - bottom) / 2:.1f})">overall IQM score</text>')
    return _svg(width, height, body, "score against cost")


def profiles(card: dict, colour: dict, width: int = 560, height: int = 360) -> str:
    """rliable's performance profiles: per agent, the fraction of its (cell, seed) runs scoring above
    tau, against tau; the highlighted agents bold, the others thin."""
    left, top, right, bottom = 50, 14, 16, 40
    found = card.get("profiles") or {"taus": [0.0, 1.0], "fraction_above": {}}
    taus = np.array(found["taus"], float)
    sx = lambda t: left + np.asarray(t) * (width - left - right)
    sy = lambda v: top + (1 - np.asarray(v)) * (height - top - bottom)
    body = [(f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
             'fill="none" stroke="#ccc"/>')]
    for v in (0, 0.25, 0.5, 0.75, 1):
        body.append(f'<text x="{left - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:g}</text>'
                    f'<line x1="{left}" y1="{sy(v):.1f}" x2="{width - right}" y2="{sy(v):.1f}" stroke="#f0f0f0"/>'
                    f'<text x="{sx(v):.1f}" y="{height - bottom + 14}" text-anchor="middle">{v:g}</text>')
    bold = set(card.get("highlight") or card.get("new", []))
    for a in sorted(found["fraction_above"], key=lambda a: a in bold):
        f = np.array(found["fraction_above"][a], float)
        tip = escape(f"{a}: " + ", ".join(f"{f[i]:.2f} above {taus[i]:g}" for i in range(0, len(taus), 5)))
        body.append(f'<polyline points="{_points(sx(taus), sy(f))}" fill="none" stroke="{colour[a]}" '
                    f'stroke-width="{2.5 if a in bold else 1.1}" stroke-opacity="{1 if a in bold else 0.7}">'
                    f'<title>{tip}</title></polyline>')
    body.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 6}" text-anchor="middle">score tau</text>')
    body.append(f'<text x="12" y="{(top + height - bottom) / 2:.1f}" text-anchor="middle" '
                f'transform="rotate(-90 12 {(top + height - bottom) / 2:.1f})">fraction of runs above tau</text>')
    return _svg(width, height, body, "performance profiles")


def chosen(card: dict, cell_id: str) -> list[str]:
    """The agents of a cell's curves: the new ones, the cell's best zoo agents and Random."""
    new = card.get("new", [])
    rows = card["cells"][cell_id]["agents"]
    zoo = sorted((a for a in card["agents"] if a not in new and a != "Random"), key=lambda a: rows[a]["rank"])
    return [*new, *zoo[:BEST], "Random"]


def matrix(card: dict) -> str:
    """The wins-minus-losses matrix as a table, green where the row agent wins more than it loses, in
    a box that scrolls (its header row and column stay in view), however many agents."""
    names, wml = card["agents"], card["aggregates"]["overall"]["wins_minus_losses"]
    n = max(1, len(card["cells"]))
    head = "<tr><th>row vs column</th>" + "".join(f"<th>{escape(b)}</th>" for b in names) + "</tr>"
    rows = []
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("<td></td>")
                continue
            v = wml[a][b]
            hue = "120" if v > 0 else "0"
            cells.append(f'<td style="background:hsla({hue},60%,50%,{min(abs(v) / n, 1) * 0.6:.2f})">{v}</td>')
        rows.append(f"<tr><th>{escape(a)}</th>" + "".join(cells) + "</tr>")
    return '<div class="scroll"><table>' + head + "".join(rows) + "</table></div>"


def bakeoff(card: dict) -> str:
    """The Bake-off's section (a suite of its protocol, pmlb-v1): its wins-minus-losses table by the
    z-test of the PV losses, the signed-rank one in brackets, and each agent's mean PV loss; "" on
    other suites."""
    b = card.get("bakeoff")
    if not b:
        return ""
    names, wml, signed = b["agents"], b["wins_minus_losses"], b["signed_rank_wins_minus_losses"]
    n = max(1, len(b["pv_loss"]))
    head = "<tr><th>row vs column</th>" + "".join(f"<th>{escape(x)}</th>" for x in names) + "</tr>"
    rows = []
    for a in names:
        cells = [f'<td style="background:hsla({"120" if wml[a][c] > 0 else "0"},60%,50%,'
                 f'{min(abs(wml[a][c]) / n, 1) * 0.6:.2f})">{wml[a][c]} ({signed[a][c]})</td>' if a != c else "<td></td>"
                 for c in names]
        rows.append(f"<tr><th>{escape(a)}</th>" + "".join(cells) + "</tr>")
    mean = "; ".join(f"{escape(a)} {v:.3f}" for a, v in b["mean_pv_loss"].items())
    return (f'<h2>The Bake-off\'s rule: wins minus losses</h2><p class="note">A win of row over column on a cell when '
            f'the {escape(b["rule"])}; in brackets the signed-rank tests\' wins minus losses over the seeds. Mean PV '
            f'loss (error rate) over the cells: {mean}.</p><div class="scroll"><table>' + head + "".join(rows)
            + "</table></div>")


def tables(card: dict, colour: dict) -> tuple[str, str]:
    """The overall IQM score with its interval, the wins, ties and losses, and the CPU seconds per
    1,000 rounds; the IQM score by tag (its interval on hover). Best agent first, with its rank."""
    agg = card["aggregates"]
    tags = [t for t in agg if t != "overall"]
    order = sorted(card["agents"], key=lambda a: -np.nan_to_num(agg["overall"]["iqm"][a][0], nan=-1))
    rank = card.get("rank") or {a: i for i, a in enumerate(order, 1)}
    swatch = '<i style="display:inline-block;width:10px;height:10px;background:{}"></i> {}'
    overall = ['<tr><th>#</th><th style="text-align:left">agent</th><th>IQM score [95% CI]</th><th>W / T / L</th><th>CPU-s / 1k rounds</th></tr>']
    by_tag = ["<tr><th>agent</th>" + "".join(f"<th>{escape(t)}</th>" for t in tags) + "</tr>"]
    for a in order:
        x, low, high = agg["overall"]["iqm"][a]
        name = swatch.format(colour[a], escape(a))
        spent = (card.get("cost", {}).get(a) or {}).get("cpu_seconds_per_1k_rounds")
        overall.append(f'<tr><td>{rank[a]}</td><td style="text-align:left">{name}</td><td>{_fmt(x)} [{_fmt(low)}, {_fmt(high)}]</td>'
                       f'<td>{" / ".join(map(str, agg["overall"]["wins_ties_losses"][a]))}</td>'
                       f'<td>{"n/a" if spent is None else f"{spent:.3g}"}</td></tr>')
        by_tag.append(f"<tr><td>{name}</td>" + "".join(
            f'<td title="95% CI {_fmt(agg[t]["iqm"][a][1])} to {_fmt(agg[t]["iqm"][a][2])}">{_fmt(agg[t]["iqm"][a][0])}'
            "</td>" for t in tags) + "</tr>")
    return "<table>" + "".join(overall) + "</table>", "<table>" + "".join(by_tag) + "</table>"


def against(card: dict, colour: dict) -> str:
    """The table of each agent against the card's baseline (empty without one): wins, ties and
    losses over the cells, the same after Holm's correction, the probability of improvement."""
    base = card.get("baseline")
    if not base:
        return ""
    rows = card["against"]
    order = sorted(rows, key=lambda a: (card.get("rank") or {}).get(a, 0))
    swatch = '<i style="display:inline-block;width:10px;height:10px;background:{}"></i> {}'
    head = (f"<tr><th>agent</th><th>W / T / L vs {escape(base)}</th><th>after Holm</th>"
            f"<th>P(agent &gt; {escape(base)}) [95% CI]</th></tr>")
    body = "".join(f'<tr><td>{swatch.format(colour[a], escape(a))}</td>'
                   f'<td>{" / ".join(map(str, rows[a]["wins_ties_losses"]))}</td>'
                   f'<td>{" / ".join(map(str, rows[a]["holm_wins_ties_losses"]))}</td>'
                   f'<td>{_fmt(rows[a]["probability_of_improvement"][0])} [{_fmt(rows[a]["probability_of_improvement"][1])}, '
                   f'{_fmt(rows[a]["probability_of_improvement"][2])}]</td></tr>' for a in order)
    return (f'<h2>Against {escape(base)}</h2><p class="note">Cells won, tied and lost against {escape(base)} '
            f"(signed-rank at {card['alpha']}), the same after Holm's correction over the {len(rows) * len(card['cells'])} "
            f"tests against it, and rliable's probability of improvement: the chance that a seed's score beats one of "
            f"{escape(base)}'s on a cell, averaged over the scored cells (ties count half).</p>"
            f'<div class="scroll"><table>{head}{body}</table></div>')


def caveat(card: dict) -> str:
    """The multiple-testing caveat: how many tests the wins and losses are, how many chance alone
    would call, how many Holm's correction keeps."""
    many = card.get("multiplicity")
    if not many:
        return ""
    return (f'<p class="note">Multiple testing: the wins and losses are {many["tests"]:,} signed-rank tests at '
            f'{card["alpha"]} with no correction; with no true difference anywhere about {many["by_chance"]:.0f} '
            f'would be called by chance. They call {many["decided"]:,}; Holm\'s correction over the family keeps '
            f'{many["holm"]:,}.' + (f' With {many["seeds"]} seeds the smallest p-value is {many["smallest_p"]:.3g}: Holm '
                                   f'over more than {many["largest_family"]} tests keeps nothing.'
                                   if many.get("smallest_p") else "") + '</p>')


def page(card: dict, curves: dict) -> str:
    """The whole scorecard page; `curves`: cell id -> agent -> (rounds, mean regret or clicks) or
    (rounds, means, standard deviations over the seeds)."""
    colour = colours(card)
    refs = card.get("references") or {}
    zoo = (f"Zoo: the shipped references of {', '.join(refs['agents'])} ({refs['folder']}). " if refs.get("agents")
           else "")
    intro = (f"{len(card['cells'])} cells, seeds {card['seeds'][0]}..{card['seeds'][-1]} ({len(card['seeds'])}), "
             f"paired by seed. {zoo}Score: 1 - regret / Random's, clipped to [0, 1] (replay: clicks / Random's - 1). "
             f"Intervals: {card['interval']}. Wins, ties, losses: {card['test']} (a win at p &lt; {card['alpha']}). "
             "Track of each agent's numbers: " + escape("; ".join(f"{a}: {t}" for a, t in card.get("tracks", {}).items()))
             + ".")
    grid = "".join(curve(c, card["cells"][c], {a: curves[c][a] for a in chosen(card, c)}, colour) for c in card["cells"])
    title = f"Scorecard: suite {card['suite']}, {card['track']} track"
    overall, by_tag = tables(card, colour)
    drawn = [a for a in card["agents"] if a in (card.get("highlight") or card["agents"])]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title><style>{CSS}</style></head>
<body>
<h1>{escape(title)}</h1>
<p class="note">{intro}</p>
{legend(card, colour)}
<h2>Score by tag (IQM over cells and seeds)</h2>
<div class="row"><div>{radar(card, colour)}{legend(card, colour, drawn)}</div><div style="flex: 1 1 420px">{overall}<p class="note">W / T / L:
wins, ties and losses over all cells and other agents. CPU-s / 1k rounds: the CPU seconds the runs' manifests record
per 1,000 rounds played.</p>{caveat(card)}</div></div>
<div class="row"><div><h2>IQM score by tag</h2>{by_tag}</div><div style="flex: 1 1 420px">{against(card, colour)}</div></div>
<h2>Score against cost, and performance profiles</h2>
<div class="row">{cost(card, colour)}{profiles(card, colour)}</div>
<p class="note">Left: the overall IQM score (its interval a bar) against the CPU seconds per 1,000 rounds. Right:
rliable's performance profiles, the fraction of (cell, seed) runs scoring above tau; bold: {escape(", ".join(drawn))}.</p>
<h2>Score per cell</h2>
<p class="note">Bars: the new agents ({escape(", ".join(card.get("new", [])) or "none")}). Grey band: the range of the
other agents' scores, a coloured tick each, the dark tick their median.</p>
{cell_bars(card, colour)}
<h2>Wins minus losses over all cells</h2>
{matrix(card)}
{bakeoff(card)}
<h2>Curves: cumulative regret (replay: clicks) against the round</h2>
<p class="note">Mean over the seeds, a band of one standard deviation either side; the new agents, each cell's {BEST}
best other agents, Random dashed.</p>
<div class="grid">{grid}</div>
</body></html>
"""
