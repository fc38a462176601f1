"""Results folders named by a URI (`s3://bucket/results/x`, `gs://...`, `file:///mnt/shared/x`, any
fsspec protocol): the part of `pathlib.Path` that the results store (results.py) uses, on an fsspec
filesystem.

A comparison on a Ray cluster returns its tables to the driver, which writes them into a local
`--out`; where the results are too large to pass through the driver, `--out` may be a URI that
every node reaches, and the workers write there themselves. The store's rules hold there too: a
file is written under a temporary name and moved to its own (an object store shows an object only
once it is whole, and a local move is a rename), and it carries the checksum of its values.
Claims (two runs sharing a folder, results.claim) need an exclusive create, which object stores
lack: a URI folder is not claimed, so two drivers on one URI may both run a job; both write the
same numbers, and the last whole file stays.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_uri(out) -> bool:
    """True for a URI (`scheme://...`), False for a local path."""
    return isinstance(out, UriPath) or (isinstance(out, str) and URI.match(out) is not None)


def location(out) -> Path | UriPath:
    """`out` as the results store reaches it: a UriPath for a URI, else a Path."""
    if isinstance(out, (Path, UriPath)):
        return out
    return UriPath(out) if is_uri(out) else Path(out)


def filesystem(uri: str):
    """The fsspec filesystem of `uri`, or a ValueError of one line naming the library to install."""
    scheme = URI.match(uri)[1]
    try:
        import fsspec
    except ImportError:
        raise ValueError(f"out {uri!r} is a URI, which needs fsspec: pip install fsspec (and the library of "
                         f"{scheme}://, e.g. s3fs or gcsfs), or give a local or mounted folder") from None
    try:
        return fsspec.filesystem(scheme)
    except ImportError as err:        # fsspec knows the protocol; its library (s3fs, gcsfs, adlfs...) is missing
        raise ValueError(f"out {uri!r}: no filesystem library for {scheme}:// here ({err}); install it on the "
                         "driver and on every node, or give a local or mounted folder") from None
    except ValueError as err:
        raise ValueError(f"out {uri!r}: no filesystem knows {scheme}:// ({err}); give s3://, gs://, file:// or "
                         "another fsspec protocol, or a local folder") from None


class UriPath:
    """A file or folder at a URI, with the few `pathlib.Path` methods the results store uses."""

    def __init__(self, uri: str, fs=None):
        self.uri = uri.rstrip("/")
        self.fs = fs if fs is not None else filesystem(uri)
        self.path = self.fs._strip_protocol(self.uri)

    def __truediv__(self, name: str) -> UriPath:
        return UriPath(f"{self.uri}/{name}", self.fs)

    def __str__(self) -> str:
        return self.uri

    def __repr__(self) -> str:
        return f"UriPath({self.uri!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, UriPath) and other.uri == self.uri

    def __hash__(self) -> int:
        return hash(self.uri)

    def __reduce__(self):
        return UriPath, (self.uri,)      # a worker rebuilds the filesystem from its own credentials

    @property
    def name(self) -> str:
        return self.uri.rpartition("/")[2]

    @property
    def parent(self) -> UriPath:
        return UriPath(self.uri.rpartition("/")[0], self.fs)

    def exists(self) -> bool:
        return self.fs.exists(self.path)

    def is_dir(self) -> bool:
        return self.fs.isdir(self.path)

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        self.fs.makedirs(self.path, exist_ok=exist_ok)

    def read_bytes(self) -> bytes:
        return self.fs.cat_file(self.path)

    def read_text(self) -> str:
        return self.read_bytes().decode()

    def write_bytes(self, data: bytes) -> None:
        """Write `data` under a temporary name in the same folder, then move it to this name."""
        tmp = self.parent / f".tmp-{uuid.uuid4().hex}-{self.name}"
        try:
            self.fs.pipe_file(tmp.path, data)
            self.fs.mv(tmp.path, self.path)
        except BaseException:
            if self.fs.exists(tmp.path):
                self.fs.rm(tmp.path)
            raise

    def write_text(self, text: str) -> None:
        self.write_bytes(text.encode())

    def unlink(self, missing_ok: bool = False) -> None:
        if missing_ok and not self.exists():
            return
        self.fs.rm(self.path)
