"""The Ray backend: a comparison's units of work as Ray tasks, on a laptop's own Ray or a cluster.

What a real cluster needs, and where it is done (docs/cluster.md is the guide):
* Results travel through Ray: a task returns its tables and the driver writes them into `--out`
  (results.write_atomic: atomic, checksummed), so no filesystem is shared with the workers. With a
  URI `--out` (store.py) the workers write there themselves and return only the file names.
* Code: the driver's `gym_ctxbandits` and `agents` packages and the user's modules (`--import`,
  `module:Id` env ids) reach the workers through the job's runtime_env (py_modules). With
  `code="installed"` the nodes' own installation runs instead; either way every task first checks
  that the worker imports the driver's version and code (ray_task.py), and a difference stops the
  run with one line.
* Addresses as Ray takes them: None (RAY_ADDRESS, or a new local Ray), "auto", "HOST:PORT" (the
  head's GCS) and "ray://HOST:10001" (Ray Client); `ray job submit -- ctxbandits run --address auto`
  runs the driver on the head node.
* Resources: a unit asks for `cpus_per_unit` CPUs, and `gpus_per_unit` GPUs when its jobs run on
  CUDA (`--device cuda`: the torch agents' units; the numpy agents' units ask for none, and Ray keeps
  them off GPU nodes while CPU nodes are free). At most `max_in_flight` units are submitted and not
  yet collected, so a sweep of a million units holds a bounded number of results at a time.
* Faults: Ray runs a task again when its worker or node dies (`max_retries`), and the units are
  deterministic, so the numbers are an uninterrupted run's. Ctrl-C (any exception) on the driver
  stops the tasks in flight (`_submit`); the files written so far are whole, and a rerun resumes.
"""

from __future__ import annotations

import collections
import os
import pickle
import socket
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from urllib.parse import urlsplit

from gym_ctxbandits import codehash, ray_task
from gym_ctxbandits.backends import WorkerDied, _bar
from gym_ctxbandits.jobs import Job
from gym_ctxbandits.results import write_atomic
from gym_ctxbandits.store import UriPath

CODE = ("ship", "installed")
CONNECT_TIMEOUT = 5.0      # seconds to wait for the head to answer before saying the address is wrong
CLIENT_ATTEMPTS = 3        # Ray Client connections tried while the head fails to start this driver's server
# What Ray 2.60's Ray Client server answers when the process it forked for a driver died before it
# served (ray-project/ray#63202: gRPC's threads crash the child between fork and exec; intermittent,
# more often on a busy head) or did not answer in 30 s (RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S).
CLIENT_SERVER_DIED = ("Starting Ray client server failed", "Proxy failed to Connect to backend")


class ClusterError(RuntimeError):
    """The Ray cluster cannot run the comparison (unreachable, refused, or a worker with other code): one line."""


@dataclass(frozen=True)
class RayOptions:
    """How the units run on Ray (`run(..., ray={...})`, a config's `[ray]` table, `ctxbandits run`'s flags).

    code: "ship" (the driver's packages and modules go to the workers in the runtime_env) or
    "installed" (the nodes' own gym-ctxbandits runs; it must be the driver's version and code).
    cpus_per_unit, gpus_per_unit: Ray resources a unit asks for; the GPUs only by a unit whose jobs
    run on CUDA (a fraction shares a GPU between units). max_in_flight: units submitted and not
    yet collected (None: twice the cluster's CPU slots when the run starts, at least 16).
    max_retries: Ray's retries of a unit whose worker or node died.
    """

    code: str = "ship"
    cpus_per_unit: float = 1
    gpus_per_unit: float = 1
    max_in_flight: int | None = None
    max_retries: int = 3

    def __post_init__(self):
        if self.code not in CODE:
            raise ValueError(f"ray code must be one of {CODE} (--ray-code), got {self.code!r}")
        for name, low in (("cpus_per_unit", 0), ("gpus_per_unit", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > low:
                raise ValueError(f"ray {name} must be a number > 0 (--{name.replace('_', '-')}), got {value!r}")
        for name, low in (("max_in_flight", 1), ("max_retries", 0)):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise ValueError(f"ray {name} must be an integer >= {low}, got {value!r}")

    @classmethod
    def of(cls, value) -> RayOptions:
        """RayOptions from None (the defaults), a dict of its fields, or RayOptions."""
        if value is None or isinstance(value, cls):
            return value or cls()
        if not isinstance(value, dict):
            raise ValueError(f"ray options must be a dict or RayOptions, got {type(value).__name__}")
        known = [f.name for f in fields(cls)]
        if unknown := sorted(set(value) - set(known)):
            raise ValueError(f"ray options {unknown} are unknown; known: {', '.join(known)}")
        return cls(**value)


def parse_address(address: str | None) -> tuple[str, int] | None:
    """(host, port) of an address that names the head ("HOST:PORT", "ray://HOST:PORT"); None for
    None, "auto" and "local", which Ray resolves itself. A ValueError of one line for anything else."""
    if address is None or address in ("auto", "local"):
        return None
    usage = "give auto, HOST:PORT (the head's address, `ray start --head` prints it) or ray://HOST:10001 (Ray Client)"
    if address.startswith(("http://", "https://")):
        raise ValueError(f"--address {address}: that is a dashboard's (Ray Jobs') address, for `ray job submit "
                         f"--address`; {usage}")
    scheme, sep, rest = address.rpartition("://")
    if sep and scheme != "ray":
        raise ValueError(f"--address {address}: unknown scheme {scheme}://; {usage}")
    try:
        parts = urlsplit(f"//{rest}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None or parts.path or parts.query:
        raise ValueError(f"--address {address}: not an address; {usage}")
    return host, port


def check_reachable(address: str | None) -> None:
    """A ClusterError of one line when nothing answers at the head's host and port (Ray itself
    retries for a minute before it says so)."""
    if (where := parse_address(address)) is None:
        return
    try:
        socket.create_connection(where, timeout=CONNECT_TIMEOUT).close()
    except OSError as err:
        server = "the head's Ray Client server (`ray start --head` starts it on port 10001)" \
            if address.startswith("ray://") else "the head (`ray start --head` prints its address)"
        raise ClusterError(f"--address {address}: nothing answers at {where[0]}:{where[1]} "
                           f"({err.strerror or err}); start {server}, or check the address and the firewall") from None


def import_ray(address: str | None):
    """Ray, or an ImportError of one line naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise ImportError("the Ray backend needs Ray: pip install -e '.[ray]' in the gym-ctxbandits clone (it "
                          "installs ray[default,client])") from None
    if address and address.startswith("ray://"):
        try:
            import grpc  # noqa: F401
        except ImportError:
            raise ImportError(f"--address {address}: Ray Client needs ray[client]: pip install -e '.[ray]' in the "
                              "gym-ctxbandits clone, or pip install 'ray[client]'") from None
    return ray


def _installed(path: Path) -> bool:
    """True for a module of Python's standard library or of an installed distribution."""
    import sysconfig

    libraries = {Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    path = path.resolve()
    return any(part in ("site-packages", "dist-packages") for part in path.parts) or \
        any(path.is_relative_to(lib) for lib in libraries)


def runtime_env(modules: Sequence[str] = (), root: str | None = None, code: str = "ship") -> dict:
    """The job's runtime_env: py_modules holding the driver's `gym_ctxbandits` and `agents` (code
    "ship") and the user's modules of `modules` that live in the driver's own folders (a `.py` path
    relative to `root`, default the current folder, or the top package of a dotted name; an
    installed package is the cluster's business, like numpy). A session that connects to Ray itself
    passes it to `ray.init(address, runtime_env=runtime_env(["my_module"]))` before `run`."""
    import agents

    root = root or os.getcwd()
    ours = (Path(__file__).parent, Path(agents.__file__).parent)      # gym_ctxbandits/ is this folder
    entries = list(ours) if code == "ship" else []
    for name in modules:
        if name.endswith(".py"):
            entries.append(Path(root, name).resolve())
            continue
        path = Path(sys.modules[name.split(".")[0]].__file__)
        path = path.parent if path.name == "__init__.py" else path
        if not _installed(path):
            entries.append(path)
    return {"py_modules": [str(p) for p in dict.fromkeys(entries)], "excludes": ["__pycache__/", "*.pyc"]} \
        if entries else {}


def worker_modules(modules: Sequence[str]) -> list[str]:
    """What a worker imports for `modules`: a shipped `.py` file by its module name."""
    return [Path(m).stem if m.endswith(".py") else m for m in modules]


def connect(ray, address: str | None, env: dict, **init) -> None:
    """ray.init at `address` with the runtime_env `env` (and `init`, more of ray.init's keywords);
    its failures as one ClusterError line.

    Through the Ray Client (ray://), the head's Ray Client server starts a server process for each
    driver, and in Ray 2.60 that process sometimes dies as it is forked (ray-project/ray#63202;
    a segfault in gRPC, logged by the kernel, with empty ray_client_server_PORT.err): the
    connection is then tried again, up to CLIENT_ATTEMPTS times, each try a fresh process."""
    kwargs = {"include_dashboard": False} if address is None and "RAY_ADDRESS" not in os.environ else {}
    where = f"--address {address}" if address else "a local Ray (or RAY_ADDRESS)"
    for attempt in range(1, CLIENT_ATTEMPTS + 1):
        try:
            ray.init(address=address, runtime_env=env or None, log_to_driver=False, **kwargs, **init)
            return
        except Exception as err:
            reason = _reason(err)
            died = any(text in reason for text in CLIENT_SERVER_DIED)
            if died and attempt < CLIENT_ATTEMPTS:
                warnings.warn(f"{where}: the head's Ray Client server could not start this driver's server ({reason}); "
                              f"connecting again ({attempt + 1} of {CLIENT_ATTEMPTS})", stacklevel=2)
                continue
            if died:
                reason = (f"the head's Ray Client server could not start this driver's server {attempt} times: {reason}; "
                          "its process dies as it starts, a Ray bug of busy heads (ray-project/ray#63202): run the "
                          "command again, or connect by the head's HOST:6379 address or run it as a job (ray job "
                          "submit), as docs/cluster.md shows")
            elif any(type(e).__name__ == "AuthenticationError" or "Authentication token" in str(e) for e in _chain(err)):
                reason = ("the cluster uses token authentication: set RAY_AUTH_MODE=token and its token (RAY_AUTH_TOKEN, "
                          "or the head's ~/.ray/auth_token) here, as docs/cluster.md shows")
            raise ClusterError(f"{where}: cannot connect ({reason})") from None


def _reason(err: BaseException) -> str:
    """The line of a Ray error that says what failed: its first, or, for a header ending in ':' over
    a server's traceback ("Initialization failure from server:\nTraceback ..."), the traceback's last."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    return lines[-1] if lines[0].endswith(":") and len(lines) > 1 else lines[0]


def _chain(err: BaseException):
    """`err` and the exceptions it was raised from (Ray wraps the cause of a failed connection twice)."""
    while err is not None:
        yield err
        err = err.__cause__ or err.__context__


def run_ray(units: list[list[Job]], out: Path | UriPath, progress: bool, address: str | None = None,
            modules: Sequence[str] = (), root: str | None = None, options: RayOptions | dict | None = None) -> None:
    """Run `units` as Ray tasks at `address` (see the module's docstring) and write their files into
    `out` (a local folder: the driver writes; a URI: the workers do). `modules` are the user's
    modules (names, or `.py` paths relative to `root`, default the current folder). A Ray already
    initialized in this process is used as it is (its runtime_env decides what the workers import;
    the code check still runs) and left connected."""
    options = RayOptions.of(options)
    ray = import_ray(address)
    root = root or os.getcwd()
    # The driver's code, hashed before connecting: a Ray Jobs driver's code is the job's working_dir,
    # which the node's runtime-env agent may unpack again as the job's workers start (hashing it
    # after ray.init gave a different digest on each run in tests/test_ray_cluster.py).
    identity = ray_task.code_identity()
    started = not ray.is_initialized()
    if started:
        check_reachable(address)
        connect(ray, address, runtime_env(modules, root, options.code))
    try:
        _submit(ray, units, out, progress, worker_modules(modules), identity, options, cancel=not started)
    finally:
        if started:
            ray.shutdown()


def _submit(ray, units, out, progress, modules, identity: dict, options: RayOptions, cancel: bool) -> None:
    """Keep at most `max_in_flight` units on the cluster; write each unit's files as it returns.

    On any exception (Ctrl-C included) the units in flight are stopped: by `ray.shutdown` when this
    run made the connection (a job's tasks end with its driver), else (`cancel`: a session that
    stays connected) by `ray.cancel`, without force: a force-cancel racing a task's reply aborted
    the driver in Ray 2.60 ("Check failed: it != submissible_tasks_.end()", ray-project/ray#54798)."""
    for module in (codehash, ray_task):                    # the identity check must not need our package there
        ray.cloudpickle.register_pickle_by_value(module)
    task = ray.remote(max_retries=options.max_retries, retry_exceptions=False)(ray_task.run)
    resources = ray.cluster_resources()
    gpu_units = any(str(j.device).startswith("cuda") for u in units for j in u)
    for kind, need in (("CPU", options.cpus_per_unit), ("GPU", options.gpus_per_unit if gpu_units else 0)):
        if need and resources.get(kind, 0) < need:
            warnings.warn(f"the Ray cluster has {resources.get(kind, 0):g} {kind}s now and a unit asks for {need:g}: "
                          "the units wait until such a node joins (an autoscaler's); Ctrl-C stops the run",
                          stacklevel=3)
    limit = options.max_in_flight or max(16, 2 * int(resources.get("CPU", 0) // options.cpus_per_unit))
    on_cpu = task.options(num_cpus=options.cpus_per_unit, num_gpus=0)
    on_gpu = task.options(num_cpus=options.cpus_per_unit, num_gpus=options.gpus_per_unit)
    args = (modules, identity, options.code == "ship", max(1, int(options.cpus_per_unit)),
            str(out) if isinstance(out, UriPath) else None)
    queue, in_flight, warned = collections.deque(units), {}, set()
    try:
        with _bar(sum(map(len, units)), progress, "jobs (ray)") as bar:
            while queue or in_flight:
                while queue and len(in_flight) < limit:
                    unit = queue.popleft()
                    gpu = any(str(j.device).startswith("cuda") for j in unit)
                    in_flight[(on_gpu if gpu else on_cpu).remote(pickle.dumps(unit), *args)] = unit
                done, _ = ray.wait(list(in_flight), num_returns=1)
                unit = in_flight.pop(done[0])
                kind, *result = _collect(ray, done[0], unit, options)
                if kind == "mismatch":
                    raise ClusterError(result[0])
                files, news = result
                if kind == "tables":
                    for name, table in files:
                        write_atomic(table, out / name)
                for message in set(news) - warned:
                    warnings.warn(message, stacklevel=3)
                warned.update(news)
                bar.update(len(unit))
    except BaseException:
        for ref in in_flight if cancel else ():
            ray.cancel(ref)
        raise


def _collect(ray, ref, unit: list[Job], options: RayOptions):
    """A finished task's result; its failure as the task's own exception (an agent's error) or, when
    Ray gave up on it (the worker or node died `max_retries` + 1 times), as WorkerDied."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        if isinstance(err.cause, BaseException):
            raise err.cause from None
        raise
    except ray.exceptions.RayError as err:
        jobs = ", ".join(job.filename for job in unit)
        raise WorkerDied(f"Ray lost the unit of {jobs} ({type(err).__name__}: its worker or node died, "
                         f"{options.max_retries} retries included); the finished jobs' files are kept: run the same "
                         "command again to resume") from None
