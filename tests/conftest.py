"""Suite-wide settings: one BLAS thread per process, and no test opens a network connection.

* One BLAS / OpenMP thread per process, for this process and the scripts the tests start (set
  before numpy or torch is imported; a value the caller exported wins). The tests' networks and
  matrices are tiny, so a second thread gains nothing, and on a machine whose cores are busy (a
  CI box running other jobs, two pytest sessions at once) multi-threaded torch spin-waits: a
  script's smoke run measured 19 s with one thread and 130 s with two on 2 loaded cores. The
  numbers tests compare are computed under the same setting on both sides.

* $CTXBANDITS_OFFLINE=1: the dataset loaders never download; a missing dataset is the loader's
  `DatasetNotFound` naming the files, not a download attempt. The Hugging Face libraries get
  their offline switches too. Set on import, so process pools and Ray workers inherit them.
* `no_network` (autouse): a socket connection to anything but this machine (loopback addresses,
  `localhost`, Unix sockets) raises `NetworkAccessError`, and a host name other than the local
  ones is not even resolved. Ray and the process backends still talk over loopback. An attempt
  fails the test even when the code under test swallows the exception.
* `run_script`: `python SCRIPT ARGS` run in the test's process, as Python runs it (`__main__`, its
  argv, the script's folder first on sys.path): a fresh interpreter would add 2-3 s of imports.

The data tests run on the small fixtures of data/fixtures (data/make_fixtures.py), and on the
real copies when $CTXBANDITS_DATA points to a data home holding them.
"""

from __future__ import annotations

import ipaddress
import os
import runpy
import socket
import sys
from pathlib import Path

import pytest

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ["CTXBANDITS_OFFLINE"] = "1"
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class NetworkAccessError(RuntimeError):
    """A test tried to reach another machine (deliberately not an OSError, so no `except OSError` hides it)."""


def _is_local(host) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): the local (passive or loopback) address
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").split("%", 1)[0].lower()
    if host in LOCAL_NAMES or host.endswith(".localhost") or host == socket.gethostname().lower():
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name of another machine
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or ip.is_unspecified or (mapped is not None and mapped.is_loopback)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Refuse connections to other machines; fail the test if it tried one. The value is the list of
    refused attempts (a test of the guard itself empties it)."""
    attempts: list[str] = []

    def refuse(what: str):
        attempts.append(what)
        raise NetworkAccessError(f"tests must not use the network: {what} (see tests/conftest.py)")

    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
    create_connection, getaddrinfo = socket.create_connection, socket.getaddrinfo

    def remote(sock, address) -> bool:
        return sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0])

    def guarded_connect(self, address):
        if remote(self, address):
            refuse(f"socket.connect({address!r})")
        return connect(self, address)

    def guarded_connect_ex(self, address):
        if remote(self, address):
            refuse(f"socket.connect_ex({address!r})")
        return connect_ex(self, address)

    def guarded_create_connection(address, *args, **kwargs):
        if not _is_local(address[0]):
            refuse(f"socket.create_connection({address!r})")
        return create_connection(address, *args, **kwargs)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if not _is_local(host):
            try:  # an IP literal resolves without asking a name server; connecting to it is refused above
                ipaddress.ip_address(str(host.decode() if isinstance(host, bytes) else host).split("%", 1)[0])
            except ValueError:
                refuse(f"socket.getaddrinfo({host!r}) (a DNS look-up)")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "create_connection", guarded_create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts
    if attempts:
        pytest.fail("the test tried to use the network (the error may have been caught): " + "; ".join(attempts),
                    pytrace=False)


@pytest.fixture
def driver_writes(monkeypatch) -> list[str]:
    """The names of the result files this process (the Ray driver) writes; workers are other processes."""
    from gym_ctxbandits import ray_backend

    written, write = [], ray_backend.write_atomic

    def record(table, path):
        written.append(path.name)
        write(table, path)

    monkeypatch.setattr(ray_backend, "write_atomic", record)
    return written


@pytest.fixture
def run_script(monkeypatch):
    """`run_script(SCRIPT, *ARGS)`: `python SCRIPT ARGS` in this process (runpy, `__main__`, argv and
    the script's folder on sys.path put back after the test); its exit code."""
    def run(script, *args) -> int:
        monkeypatch.setattr(sys, "argv", [str(script), *args])
        monkeypatch.syspath_prepend(str(Path(script).parent))
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as stop:
            return 0 if stop.code is None else stop.code
        return 0
    return run
