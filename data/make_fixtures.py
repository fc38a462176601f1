"""Make the small offline test fixtures of data/fixtures from the real copies of the datasets.

    python data/make_fixtures.py --source ../shared/data          # (re)write data/fixtures
    python data/make_fixtures.py --source ../shared/data --check  # exit 1 if data/fixtures differ

The source is a data home in the layout of docs/datasets.md ($CTXBANDITS_DATA when --source is not
given). Every fixture is a few hundred rows at most, in the exact format a loader of
gym_ctxbandits.datasets parses, so the tests run the real parsing code without the network:

  fixtures/home/      the data-home layout of the shared copies (the files' first-choice names)
  fixtures/upstream/  the other layouts the loaders accept: the files as the public sources
                      distribute them (UCI's space-separated Shuttle, Mushroom without a header,
                      Adult with its "|1x3" line, Covertype's full 55-column covtype.data.gz,
                      magic04.data, KEEL's phoneme.dat, decompressed IDX under the dotted names)
  fixtures/expected.json  what each loader must return on each tree (rows, classes)
  fixtures/SHA256SUMS     the fixtures' checksums

Rows of real files are copied byte for byte (line endings and spacing kept), chosen per class by a
hash of (dataset, row number), so a fixture holds every class the source has, in file order.
Fashion-MNIST and the measuring-hate-speech corpus have no copy here: they are synthetic (same
format, dtypes and label sets; fixed seeds). Everything is deterministic (gzip without a time stamp).
The fixtures hold canonical file names with fewer rows: load them with check_size=False.
"""

from __future__ import annotations

import argparse
import csv
import filecmp
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FASHION_CLASSES = 10


# ---------------------------------------------------------------------------------------------- helpers

def rank(dataset: str, i: int) -> bytes:
    """A fixed pseudo-random order of the rows of a dataset (independent of any RNG library)."""
    return hashlib.sha256(f"{dataset}:{i}".encode()).digest()


def pick(dataset: str, labels, n: int, minimum: int = 3) -> list[int]:
    """Row numbers (sorted) of about n rows: every class, at least `minimum` of each (or all it has),
    the rest in proportion to the class sizes."""
    labels = list(labels)
    classes = sorted(set(labels), key=str)
    by_class = {c: [i for i, y in enumerate(labels) if y == c] for c in classes}
    chosen = []
    for c in classes:
        rows = sorted(by_class[c], key=lambda i: rank(dataset, i))
        share = max(minimum, round(n * len(rows) / len(labels)))
        chosen += rows[:share]
    return sorted(chosen)


def split_lines(raw: bytes, header: int = 0):
    """(header lines, data lines, trailing blank lines) of a line-based text file, line ends kept."""
    lines = raw.splitlines(keepends=True)
    head, body = lines[:header], lines[header:]
    tail = []
    while body and not body[-1].strip():
        tail.insert(0, body.pop())
    return head, body, tail


def join(head, rows, tail, newline_at_end: bool) -> bytes:
    """The lines of a fixture; every row ends with the file's line end, the last one only if the
    source file's last line does."""
    ending = next((r[len(r.rstrip(b"\r\n")):] for r in rows if r.endswith(b"\n")), b"\n")
    out = b"".join(head + [r if r.endswith(b"\n") else r + ending for r in rows] + tail)
    return out if newline_at_end else out.rstrip(b"\r\n")


def field(line: bytes, j: int, sep: bytes = b",") -> str:
    return line.rstrip(b"\r\n").split(sep)[j].strip().decode()


def write(path: Path, data: bytes, compress: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as f:
            f.write(data)
        data = buffer.getvalue()
    path.write_bytes(data)


def idx(array: np.ndarray) -> bytes:
    header = struct.pack(">BBBB", 0, 0, 8, array.ndim) + b"".join(struct.pack(">I", n) for n in array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def read_idx(path: Path) -> np.ndarray:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, np.uint8, offset=4 * (1 + ndim)).reshape(shape)


def need(src: Path, rel: str) -> Path:
    path = src / rel
    if not path.is_file():
        sys.exit(f"make_fixtures: {path} is missing; point --source to a data home holding the real copies "
                 "(see docs/datasets.md)")
    return path


# ---------------------------------------------------------------------------------------------- datasets

def mnist(src: Path, home: Path, upstream: Path, expected: dict) -> None:
    images = read_idx(need(src, "mnist/t10k-images-idx3-ubyte.gz"))
    labels = read_idx(need(src, "mnist/t10k-labels-idx1-ubyte.gz"))
    rows = pick("mnist-test", labels.tolist(), 200, minimum=20)
    write(home / "mnist/t10k-images-idx3-ubyte.gz", idx(images[rows]), compress=True)
    write(home / "mnist/t10k-labels-idx1-ubyte.gz", idx(labels[rows]), compress=True)
    expected["home"]["mnist:test"] = {"rows": len(rows), "classes": [str(c) for c in range(10)]}
    few = pick("mnist-test-plain", labels.tolist(), 40, minimum=4)
    write(upstream / "mnist/t10k-images.idx3-ubyte", idx(images[few]))   # decompressed, dotted names
    write(upstream / "mnist/t10k-labels.idx1-ubyte", idx(labels[few]))
    expected["upstream"]["mnist:test"] = {"rows": len(few), "classes": [str(c) for c in range(10)]}

    raw = gzip.decompress(need(src, "mnist/mnist_5k.csv.gz").read_bytes())
    _, body, tail = split_lines(raw)
    rows = pick("mnist-5k", [field(line, 784) for line in body], 100, minimum=10)
    write(home / "mnist/mnist_5k.csv.gz", join([], [body[i] for i in rows], tail, raw.endswith(b"\n")), compress=True)
    expected["home"]["mnist:subset5k"] = {"rows": len(rows), "classes": [str(c) for c in range(10)]}


def fashion_mnist(home: Path, expected: dict) -> None:
    """Synthetic: one garment-like silhouette per class, shifted and shaded per image (seed 2024)."""
    rng = np.random.default_rng(2024)
    yy, xx = np.mgrid[0:28, 0:28]
    # (top, bottom, left, right) of each class's silhouette, plus a hole or a split for some classes
    boxes = [(5, 20, 6, 22), (3, 25, 10, 18), (4, 22, 4, 24), (3, 26, 8, 20), (3, 24, 4, 24),
             (16, 23, 2, 26), (4, 22, 5, 23), (14, 23, 2, 26), (8, 24, 5, 23), (6, 24, 8, 24)]

    def images(count: int):
        labels = np.repeat(np.arange(FASHION_CLASSES), count // FASHION_CLASSES)
        labels = labels[np.argsort(rng.random(len(labels)), kind="stable")]
        out = np.zeros((len(labels), 28, 28), np.uint8)
        for k, c in enumerate(labels):
            top, bottom, left, right = boxes[c]
            dy, dx = (np.floor(rng.random(2) * 5) - 2).astype(int)
            shade = 120 + int(rng.random() * 8) * 16
            inside = (yy >= top + dy) & (yy < bottom + dy) & (xx >= left + dx) & (xx < right + dx)
            if c == 1:   # trousers: two legs
                inside &= np.abs(xx - 14 - dx) > 1
            if c == 8:   # bag: a handle
                inside |= (yy == top + dy - 3) & (xx >= left + 5 + dx) & (xx < right - 5 + dx)
            out[k][inside] = shade
        return out, labels.astype(np.uint8)

    for split, stem, count in (("test", "t10k", 200), ("train", "train", 100)):
        x, y = images(count)
        write(home / f"fashion-mnist/{stem}-images-idx3-ubyte.gz", idx(x), compress=True)
        write(home / f"fashion-mnist/{stem}-labels-idx1-ubyte.gz", idx(y), compress=True)
        expected["home"][f"fashion-mnist:{split}"] = {
            "rows": count, "classes": ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                                       "Sneaker", "Bag", "Ankle boot"]}


def shuttle(src: Path, home: Path, upstream: Path, expected: dict) -> None:
    counts = {"home": 0, "upstream": 0}
    classes = set()
    for part, n_home, n_up in (("trn", 160, 50), ("tst", 80, 30)):
        raw = need(src, f"uci/shuttle/shuttle.{part}.csv").read_bytes()
        _, body, tail = split_lines(raw)
        labels = [field(line, 9) for line in body]
        classes |= set(labels)
        rows = pick(f"shuttle-{part}", labels, n_home)
        write(home / f"uci/shuttle/shuttle.{part}.csv", join([], [body[i] for i in rows], tail, raw.endswith(b"\n")))
        few = pick(f"shuttle-{part}-uci", labels, n_up, minimum=1)
        spaced = [body[i].replace(b",", b" ") for i in few]   # UCI's files are space-separated
        write(upstream / f"uci/shuttle/shuttle.{part}", join([], spaced, [], True))
        counts["home"] += len(rows)
        counts["upstream"] += len(few)
    for tree in counts:
        expected[tree]["shuttle"] = {"rows": counts[tree], "classes": sorted(classes)}


def mushroom(src: Path, home: Path, upstream: Path, expected: dict) -> None:
    raw = need(src, "uci/mushroom/agaricus-lepiota.data").read_bytes()
    head, body, tail = split_lines(raw, header=1)
    labels = [field(line, 0) for line in body]
    rows = pick("mushroom", labels, 150)
    write(home / "uci/mushroom/agaricus-lepiota.data", join(head, [body[i] for i in rows], tail, raw.endswith(b"\n")))
    few = pick("mushroom-uci", labels, 50)
    write(upstream / "uci/mushroom/agaricus-lepiota.data", join([], [body[i] for i in few], [], True))  # no header
    expected["home"]["mushroom"] = {"rows": len(rows), "classes": ["e", "p"]}
    expected["upstream"]["mushroom"] = {"rows": len(few), "classes": ["e", "p"]}


def adult(src: Path, home: Path, upstream: Path, expected: dict) -> None:
    total = {"home": 0, "upstream": 0}
    for part, n_home, n_up in (("data", 150, 40), ("test", 100, 30)):
        raw = need(src, f"uci/adult/adult.{part}").read_bytes()
        head, body, tail = split_lines(raw, header=1 if raw.startswith(b"|") else 0)
        labels = [field(line, 14).rstrip(".") for line in body]
        rows = pick(f"adult-{part}", labels, n_home)
        write(home / f"uci/adult/adult.{part}", join(head, [body[i] for i in rows], tail, raw.endswith(b"\n")))
        few = pick(f"adult-{part}-uci", labels, n_up)
        uci_head = [b"|1x3 Cross validator\n"] if part == "test" else []   # the first line of UCI's adult.test
        write(upstream / f"uci/adult/adult.{part}", join(uci_head, [body[i] for i in few], [b"\n"], True))
        total["home"] += len(rows)
        total["upstream"] += len(few)
    for tree, n in total.items():
        expected[tree]["adult"] = {"rows": n, "classes": ["<=50K", ">50K"]}


def covertype(src: Path, home: Path, upstream: Path, expected: dict) -> None:
    from gym_ctxbandits.datasets.tables import SOIL_CODES, WILDERNESS

    total, classes, full = 0, set(), []
    for part in ("testing", "validate"):
        raw = need(src, f"uci/covertype/covertype_{part}_gcp.csv").read_bytes()
        head, body, tail = split_lines(raw, header=1)
        labels = [field(line, 12) for line in body]
        rows = pick(f"covertype-{part}", labels, 120)
        write(home / f"uci/covertype/covertype_{part}_gcp.csv",
              join(head, [body[i] for i in rows], tail, raw.endswith(b"\n")))
        total += len(rows)
        classes |= {labels[i] for i in rows}
        for i in pick(f"covertype-{part}-uci", labels, 50, minimum=2):  # UCI's 55 integer columns
            values = body[i].rstrip(b"\r\n").decode().split(",")
            wild = values[10].replace("Commanche", "Comanche")
            onehot = [str(int(w == wild)) for w in WILDERNESS] + [str(int(s == int(values[11]))) for s in SOIL_CODES]
            full.append((",".join(values[:10] + onehot + [values[12]]) + "\n").encode())
    write(upstream / "uci/covertype/covtype.data.gz", b"".join(full), compress=True)
    expected["home"]["covertype"] = {"rows": total, "classes": sorted(classes)}
    expected["upstream"]["covertype"] = {"rows": len(full), "classes": sorted({field(r, 54) for r in full})}


def simple_table(src: Path, home: Path, upstream: Path, expected: dict, name: str, rel: str, header: int,
                 label: int, n_home: int, n_up: int, upstream_name: str, upstream_head: list[bytes]) -> None:
    raw = need(src, rel).read_bytes()
    head, body, tail = split_lines(raw, header=header)
    labels = [field(line, label) for line in body]
    rows = pick(name, labels, n_home)
    write(home / rel, join(head, [body[i] for i in rows], tail, raw.endswith(b"\n")))
    few = pick(f"{name}-upstream", labels, n_up)
    write(upstream / Path(rel).parent / upstream_name, join(upstream_head, [body[i] for i in few], [], True))
    expected["home"][name] = {"rows": len(rows), "classes": sorted(set(labels))}
    expected["upstream"][name] = {"rows": len(few), "classes": sorted(set(labels))}


def phoneme_header(src: Path) -> list[bytes]:
    """KEEL's .dat header for phoneme: relation, attributes with their ranges, inputs, outputs."""
    table = np.loadtxt(need(src, "uci/phoneme/phoneme.csv"), delimiter=",")
    names = ["Aa", "Ao", "Dcl", "Iy", "Sh"]
    lines = ["@relation phoneme"]
    lines += [f"@attribute {n} real [{table[:, j].min():g}, {table[:, j].max():g}]" for j, n in enumerate(names)]
    lines += ["@attribute Class {0, 1}", f"@inputs {', '.join(names)}", "@outputs Class", "@data"]
    return [(line + "\n").encode() for line in lines]


def open_bandit(src: Path, home: Path, expected: dict, n_items: int = 20) -> None:
    """A cut of the log to its first `n_items` items: their rows of item_context.csv, about 250 of
    the events that show them, and the user-item affinity columns of those items only."""
    folder = "obd/random/all"
    with open(need(src, f"{folder}/item_context.csv"), newline="", encoding="utf-8") as f:
        item_rows = list(csv.reader(f))
    with open(need(src, f"{folder}/all.csv"), newline="", encoding="utf-8") as f:
        event_rows = list(csv.reader(f))
    header, events = event_rows[0], event_rows[1:]
    item, click = header.index("item_id"), header.index("click")
    keep_cols = [j for j, name in enumerate(header)
                 if not name.startswith("user-item_affinity_") or int(name.rsplit("_", 1)[1]) < n_items]
    shown = [e for e in events if int(e[item]) < n_items]
    rows = pick("obd-random-all", [e[click] for e in shown], 250, minimum=12)   # every click there is, up to 12
    items_out, events_out = io.StringIO(newline=""), io.StringIO(newline="")
    csv.writer(items_out, lineterminator="\n").writerows(item_rows[: 1 + n_items])
    csv.writer(events_out, lineterminator="\n").writerows(
        [[header[j] for j in keep_cols]] + [[shown[i][j] for j in keep_cols] for i in rows])
    write(home / folder / "item_context.csv", items_out.getvalue().encode("utf-8"))
    write(home / folder / "all.csv", events_out.getvalue().encode("utf-8"))
    expected["home"]["open-bandit"] = {"rows": len(rows), "items": n_items,
                                       "clicks": sum(shown[i][click] == "1" for i in rows)}


def davidson(src: Path, home: Path, expected: dict) -> None:
    """CSV records (917 tweets of the corpus span several lines), rewritten exactly as the corpus is."""
    with open(need(src, "hate/davidson/labeled_data.csv"), newline="", encoding="utf-8") as f:
        records = list(csv.reader(f))
    header, body = records[0], records[1:]
    rows = pick("davidson", [r[5] for r in body], 200, minimum=30)   # column `class`: 0 hate, 1 offensive, 2 neither
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows([header] + [body[i] for i in rows])
    write(home / "hate/davidson/labeled_data.csv", out.getvalue().encode("utf-8"))
    hateful = sum(int(body[i][2]) / int(body[i][1]) > 0.5 for i in rows)
    expected["home"]["davidson"] = {"rows": len(rows), "hateful": hateful}


def measuring(home: Path, expected: dict) -> None:
    """Synthetic: 40 comments, 1 to 4 annotations each, the Hub table's columns that matter (seed 7)."""
    rng = np.random.default_rng(7)
    words = ["the", "game", "was", "great", "today", "people", "should", "read", "this", "post", "again",
             "nobody", "cares", "about", "your", "opinion", "weather", "looks", "fine", "here"]
    lines = [["comment_id", "annotator_id", "platform", "hatespeech", "hate_speech_score", "text"]]
    annotator = 1000
    for comment in range(40):
        text = " ".join(words[int(u * len(words))] for u in rng.random(6 + int(rng.random() * 6)))
        level = rng.random() * 4 - 2
        for _ in range(1 + int(rng.random() * 4)):
            annotator += 1 + int(rng.random() * 9)
            score = round(level + (rng.random() - 0.5), 2)
            lines.append([str(20000 + 7 * comment), str(annotator), str(int(rng.random() * 4)),
                          str(int(score > 0.5) * 2), f"{score:.2f}", text])
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(lines)
    write(home / "hate/measuring/measuring_hate_speech.csv", out.getvalue().encode())
    expected["home"]["measuring-hate-speech"] = {"rows": 40}


def click_models(home: Path, expected: dict) -> None:
    """Synthetic: the two position-based click-model files of gaudel/ranking_bandits in their format
    (query id -> thetas, kappas), made up (seed 11): KDD's 2 queries of 5 items and 3 positions (kappas
    about 1, 0.48, 0.33 as the real file's), Yandex's 1 query of 12 items and 6 positions (the envs keep
    its 10 most attractive and 5 most examined)."""
    rng = np.random.default_rng(11)

    def table(queries: int, items: int, kappas: list[float]) -> bytes:
        rows = {str(5000 + 37 * q): {"thetas": [round(float(t), 4) for t in rng.uniform(0.02, 0.2, items)],
                                     "kappas": kappas} for q in range(queries)}
        return (json.dumps(rows, indent=1) + "\n").encode()

    write(home / "ranking/param_KDD.json", table(2, 5, [1.0, 0.48, 0.33]))
    write(home / "ranking/param_Yandex.json", table(1, 12, [1.0, 0.62, 0.47, 0.33, 0.2, 0.1]))
    expected["home"]["ranking:kdd"], expected["home"]["ranking:yandex"] = {"queries": 2}, {"queries": 1}


# ---------------------------------------------------------------------------------------------- main

def make(src: Path, out: Path) -> None:
    home, upstream = out / "home", out / "upstream"
    expected = {"home": {}, "upstream": {}}
    mnist(src, home, upstream, expected)
    fashion_mnist(home, expected)
    shuttle(src, home, upstream, expected)
    mushroom(src, home, upstream, expected)
    adult(src, home, upstream, expected)
    covertype(src, home, upstream, expected)
    simple_table(src, home, upstream, expected, "magic", "uci/magic/MagicTelescope.csv", 1, 10, 150, 50,
                 "magic04.data", [])
    simple_table(src, home, upstream, expected, "banknote", "uci/banknote/banknote_authentication.csv", 0, 4,
                 120, 40, "data_banknote_authentication.txt", [])
    simple_table(src, home, upstream, expected, "phoneme", "uci/phoneme/phoneme.csv", 0, 5, 150, 50,
                 "phoneme.dat", phoneme_header(src))
    open_bandit(src, home, expected)
    davidson(src, home, expected)
    measuring(home, expected)
    click_models(home, expected)
    (out / "expected.json").write_text("{\n" + ",\n".join(
        f' "{tree}": {{\n' + ",\n".join(f'  "{k}": {json.dumps(v, sort_keys=True)}' for k, v in sorted(expected[tree].items()))
        + "\n }" for tree in ("home", "upstream")) + "\n}\n")
    sums = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(out).as_posix()}"
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != "SHA256SUMS"]
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")


def same(a: Path, b: Path) -> bool:
    """Same content; gzip files by their decompressed bytes (zlib builds may compress differently),
    and SHA256SUMS then only by the names it lists."""
    if a.suffix == ".gz":
        return gzip.decompress(a.read_bytes()) == gzip.decompress(b.read_bytes())
    if a.name == "SHA256SUMS":
        names = [[line.split()[1] for line in p.read_text().splitlines()] for p in (a, b)]
        return names[0] == names[1]
    return filecmp.cmp(a, b, shallow=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=os.environ.get("CTXBANDITS_DATA"),
                        help="a data home holding the real copies (default: $CTXBANDITS_DATA)")
    parser.add_argument("--out", type=Path, default=HERE / "fixtures", help="default: data/fixtures")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    if args.source is None:
        parser.error("give --source or set $CTXBANDITS_DATA")
    sys.path.insert(0, str(HERE.parent))  # gym_ctxbandits of this checkout (Covertype's soil codes)
    if not args.check:
        shutil.rmtree(args.out, ignore_errors=True)
        make(args.source.expanduser(), args.out)
        total = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
        print(f"wrote {args.out} ({total / 1024:.0f} KiB)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        make(args.source.expanduser(), Path(tmp))
        new = {p.relative_to(tmp) for p in Path(tmp).rglob("*") if p.is_file()}
        old = {p.relative_to(args.out) for p in args.out.rglob("*") if p.is_file()}
        differ = sorted(str(p) for p in new ^ old)
        differ += sorted(str(p) for p in new & old if not same(Path(tmp) / p, args.out / p))
    if differ:
        print("fixtures differ from what make_fixtures.py makes:\n  " + "\n  ".join(differ))
        return 1
    print(f"{args.out}: up to date ({len(new)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
