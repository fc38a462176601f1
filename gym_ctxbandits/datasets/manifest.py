"""The dataset manifest (manifest.toml, beside this module): the single source of the loaders' file
names, folders, download URLs, packaged copies, row counts and checksums (SHA-256, or MD5 where
a source publishes only that).

    from gym_ctxbandits.datasets import manifest
    manifest.source("shuttle")                 # the Source the loader searches and downloads
    manifest.rows("adult")                     # {"adult.data": 32561, "adult.test": 16281}
    manifest.verify("~/data/uci/adult/adult.data")   # True / False, or None when no hash is listed
    manifest.expected_checksums("~/data/uci/magic/magic04.data")   # {("sha256", "e931...")}

The file ships inside the package (package data), so installed and editable copies both find it;
data/datasets.toml at the repository root is a link to it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from gym_ctxbandits.datasets._files import Source

PATH = Path(__file__).with_name("manifest.toml")


@functools.cache
def load() -> dict:
    """The parsed manifest: dataset name -> its table."""
    with open(PATH, "rb") as f:
        return tomllib.load(f)


def entry(name: str) -> dict:
    try:
        return load()[name]
    except KeyError:
        raise ValueError(f"the dataset manifest {PATH} has no dataset {name!r}") from None


def source(name: str, **fields) -> Source:
    """The `Source` of dataset `name`; `fields` fill the "{...}" templates (behavior, campaign)."""
    e = entry(name)
    files: dict[str, tuple[str, ...]] = {}
    urls: dict[str, str] = {}
    for f in e["files"]:
        file_name = f["name"].format(**fields)
        files[f["role"]] = files.get(f["role"], ()) + (file_name,)
        if f.get("url") and f["role"] not in urls:
            urls[f["role"]] = f["url"]
    packaged = tuple((package, sub.format(**fields)) for package, sub in e.get("packaged", ()))
    return Source(name, e["folder"].format(**fields), files, urls, e.get("page", ""), packaged)


def rows(name: str) -> dict[str, int]:
    """Expected rows of the complete files of `name`, by file name without a ".gz" suffix."""
    return {f["name"].removesuffix(".gz"): int(f["rows"]) for f in entry(name)["files"] if f.get("rows")}


def content_sha256(name: str) -> dict[str, str]:
    """SHA-256 of the decompressed content, by file name without a ".gz" suffix (the IDX files)."""
    return {f["name"].removesuffix(".gz"): f["content_sha256"] for f in entry(name)["files"]
            if f.get("content_sha256")}


@dataclass(frozen=True)
class FileRecord:
    """One file of the manifest: its dataset, its path in the data home and what is known of it."""

    dataset: str
    path: str           # relative to the data home; "{...}" left in for templated files
    role: str | None
    rows: int | None
    size: int | None
    sha256: str | None
    content_sha256: str | None
    url: str | None
    source: str | None
    md5: str | None = None

    @property
    def checksum(self) -> tuple[str, str] | None:
        """(algorithm, hex digest) a copy of this file is checked with: the SHA-256 when listed,
        else the MD5 (a source that publishes only an MD5), else None."""
        if self.sha256:
            return "sha256", self.sha256
        if self.md5:
            return "md5", self.md5
        return None


def records(dataset: str | None = None) -> list[FileRecord]:
    """Every file of the manifest (of `dataset` only, when given), the known copies included."""
    out = []
    for name, e in load().items():
        if dataset is not None and name != dataset:
            continue
        for f in e.get("files", ()):
            out.append(_record(name, f"{e['folder']}/{f['name']}", f))
        for c in e.get("copies", ()):
            out.append(_record(name, c["path"], c))
    return out


def _record(dataset: str, path: str, f: dict) -> FileRecord:
    def known(key):
        value = f.get(key)
        return value if value not in (None, "") else None

    return FileRecord(dataset, path, f.get("role"), known("rows"), known("size"), known("sha256"),
                      known("content_sha256"), known("url"), known("source"), known("md5"))


ALGORITHMS = ("sha256", "md5")   # the byte checksums the manifest may list, strongest first


def _cache_file() -> Path:
    """Where computed file hashes are remembered: $CTXBANDITS_CACHE, else ~/.cache/gym-ctxbandits."""
    return Path(os.environ.get("CTXBANDITS_CACHE") or Path.home() / ".cache" / "gym-ctxbandits") / "sha256.json"


def digests_of(path, algorithms=("sha256",)) -> dict[str, str]:
    """{algorithm: hex digest} of the file at `path`, remembered by (size, mtime) so a file is hashed
    once, not on every load. The cache entry of a file is [size, mtime_ns, {algorithm: digest}]
    ($CTXBANDITS_CACHE/sha256.json); the digests missing from it are computed in one read, and a
    file whose size or mtime changed is hashed again."""
    unknown = sorted(set(algorithms) - set(ALGORITHMS))
    if unknown:
        raise ValueError(f"unknown hash algorithm(s) {unknown}; the manifest lists {ALGORITHMS}")
    path = Path(path).expanduser().resolve()
    stat = path.stat()
    cache_file = _cache_file()
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    hit = cache.get(str(path))
    known: dict[str, str] = {}
    if isinstance(hit, list) and len(hit) == 3 and hit[:2] == [stat.st_size, stat.st_mtime_ns]:
        # an entry written before the algorithm was stored holds a bare SHA-256
        known = dict(hit[2]) if isinstance(hit[2], dict) else {"sha256": hit[2]}
    missing = [a for a in algorithms if a not in known]
    if missing:
        hashes = {a: hashlib.new(a, usedforsecurity=False) for a in missing}  # integrity, not security
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                for h in hashes.values():
                    h.update(chunk)
        known.update({a: h.hexdigest() for a, h in hashes.items()})
        cache = {k: v for k, v in cache.items() if os.path.exists(k)}   # forget files that are gone
        cache[str(path)] = [stat.st_size, stat.st_mtime_ns, known]
        try:                                          # best effort: a read-only cache only costs time
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_name(f".{cache_file.name}.{os.getpid()}")
            tmp.write_text(json.dumps(cache))
            os.replace(tmp, cache_file)
        except OSError:
            pass
    return {a: known[a] for a in algorithms}


def sha256_of(path) -> str:
    """SHA-256 of the file at `path` (remembered by size and mtime, see `digests_of`)."""
    return digests_of(path, ("sha256",))["sha256"]


def expected_checksums(path, dataset: str | None = None) -> set[tuple[str, str]]:
    """The (algorithm, digest) pairs a file at `path` may have: one per manifest record of that file
    name (of `dataset`, when given), narrowed to the records of its place in the data-home layout
    when several copies share the name (the Open Bandit Dataset's all.csv). A record's SHA-256 is
    used when it lists one, else its MD5. Empty when the manifest lists no hash for it."""
    path = Path(path).expanduser()
    same_name = [r for r in records(dataset) if Path(r.path).name == path.name and r.checksum]
    by_place = [r for r in same_name if path.as_posix().endswith("/" + r.path) or path.as_posix() == r.path]
    return {r.checksum for r in (by_place or same_name)}


def verify(path, dataset: str | None = None) -> bool | None:
    """Whether the file at `path` has a checksum the manifest lists for a file of that name: True
    when it matches one of them (the original, or a known copy such as a re-compressed one),
    False when it matches none, None when the manifest lists no hash for it
    (`expected_checksums` says which are compared).

    The loaders of images, tables and logs call it on every file they read (unless
    check_size=False); the hashes are remembered by the file's size and mtime, so reuse costs nothing.
    """
    expected = expected_checksums(path, dataset)
    if not expected:
        return None
    digests = digests_of(path, sorted({algorithm for algorithm, _ in expected}, key=ALGORITHMS.index))
    return any(digests[algorithm] == value for algorithm, value in expected)
