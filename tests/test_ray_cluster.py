"""The Ray backend on a real two-node Ray cluster that the tests start on this machine (issue 23):
`HOST:PORT`, `ray://` and `ray job submit` give the in-process numbers, no worker writes into a
local `--out` (and the workers write a URI one), a node that dies mid-run costs only a retry,
Ctrl-C stops the tasks and leaves a folder that resumes, and a node whose gym-ctxbandits differs
or a driver without the cluster's token stops the run with one line.

The cluster: a head and a second node, each `ray start --block` with one CPU, a small object
store and ports of their own, in process groups of their own; stopped by killing exactly those
groups (never `ray stop`, which stops every Ray of this user). Both nodes import an older copy of
the package first (PYTHONPATH), so a run that gives the checkout's numbers got the checkout's code
from the driver (the runtime_env), and `code="installed"` meets the older copy. Token
authentication is on, as `ray start` sets it up where a token exists (docs/cluster.md).

All `slow`: starting the cluster takes 15-40 s on 2 loaded cores, the module about 2 min.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import gymnasium
import pandas as pd
import pytest

import gym_ctxbandits
from gym_ctxbandits import ray_backend
from gym_ctxbandits.ray_backend import ClusterError
from gym_ctxbandits.results import load_results

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).parent / "ray")
ENV = "CtxBandit/Linear-v0"
AGENTS = ["LinUCB", "LinTS", "My-Greedy"]       # the third comes from the user's module, shipped to the workers
COLS = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
MODULE = (ROOT / "tests" / "user_module" / "my_bandits.py").read_text()   # a user's agent (and env)
NODE_PORTS = ("node-manager-port", "object-manager-port", "dashboard-agent-listen-port", "dashboard-agent-grpc-port",
              "runtime-env-agent-port", "metrics-export-port")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session(node: subprocess.Popen) -> list[tuple[int, bytes]]:
    """(pid, title) of the processes in the session that `node` leads (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            sid = int(stat.read_text().rpartition(")")[2].split()[3])
            title = (stat.parent / "cmdline").read_bytes().split(b"\0")[0]
        except (OSError, ValueError, IndexError):
            continue                                   # the process ended while being read
        if sid == node.pid:
            found.append((int(stat.parent.name), title))
    return found


class LocalCluster:
    """A head and a second Ray node on this machine (ray start --block, one CPU each)."""

    def __init__(self, root: Path, env: dict):
        self.root, self.env, self.nodes = root, env, []
        self.port, self.client_port, self.dashboard_port = free_port(), free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")     # short: Ray's sockets live there (107 bytes)
        self.start("head", "--head", f"--port={self.port}", f"--ray-client-server-port={self.client_port}",
                   f"--dashboard-port={self.dashboard_port}", "--include-dashboard=true", f"--temp-dir={self.temp}")

    def start(self, name: str, *args: str) -> subprocess.Popen:
        ports = [f"--{p}={free_port()}" for p in NODE_PORTS]
        log = open(self.root / f"{name}.log", "w")
        node = subprocess.Popen([RAY, "start", "--block", "--disable-usage-stats", "--num-cpus=1",
                                 "--object-store-memory=100000000", *args, *ports], env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.nodes.append(node)
        return node

    def add_node(self, name: str = "second") -> subprocess.Popen:
        return self.start(name, f"--address={self.address}")

    def wait_for(self, count: int, timeout: float = 120) -> None:
        """Until `count` nodes are alive (as `ray status` lists them)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            status = subprocess.run([RAY, "status", f"--address={self.address}"], env=self.env, capture_output=True,
                                    text=True).stdout
            active = status.partition("Active:")[2].partition("Pending:")[0]
            if active.count("node_") >= count:
                return
            time.sleep(1)
        raise TimeoutError(f"{count} Ray nodes not up in {timeout} s; logs in {self.root}")

    def kill(self, node: subprocess.Popen, sig=signal.SIGKILL) -> None:
        """Signal every process of the node's session: its raylet, agents and workers (a worker has
        a process group of its own, not a session)."""
        for pid, _ in session(node):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        for node in self.nodes:
            self.kill(node, signal.SIGTERM)
        end = time.monotonic() + 5                    # then whatever is left is killed
        for node in self.nodes:
            try:
                node.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for node in self.nodes:
            self.kill(node)
            node.wait()
        shutil.rmtree(self.temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster")
    stale = root / "stale"                                   # an older gym-ctxbandits, first on the nodes' path
    for package in ("gym_ctxbandits", "agents"):
        shutil.copytree(ROOT / package, stale / package, ignore=shutil.ignore_patterns("__pycache__"))
    init = stale / "gym_ctxbandits" / "__init__.py"
    current = f'__version__ = "{gym_ctxbandits.__version__}"'
    assert current in init.read_text()
    init.write_text(init.read_text().replace(current, '__version__ = "0.0.9"'))
    token = secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, PYTHONPATH=str(stale), OMP_NUM_THREADS="1")
    local = LocalCluster(root, env)
    try:
        local.add_node()
        local.wait_for(2)
        local.token = token
        yield local
    finally:
        local.stop()


@contextlib.contextmanager
def token_env(**values):
    """This process's Ray authentication settings changed to `values`, and back afterwards (Ray reads
    them once: its own test helper makes it read them again)."""
    from ray._private.authentication_test_utils import reset_auth_token_state

    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
    os.environ.update(values)
    reset_auth_token_state()
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        reset_auth_token_state()


@pytest.fixture
def driver(cluster, tmp_path, monkeypatch):
    """This test's folder, current, holding the user's module; this process has the cluster's token."""
    (tmp_path / "my_bandits.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    import agents

    registered = dict(agents.REGISTRY)
    with token_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=cluster.token):
        yield tmp_path
        if ray.is_initialized():
            ray.shutdown()
    agents.REGISTRY.clear()
    agents.REGISTRY.update(registered)
    sys.modules.pop("my_bandits", None)
    gymnasium.registry.pop("MyBandit-v0", None)


KW = dict(seeds=[0, 1, 2], horizon=300, log_every=50, batch=2, imports=["my_bandits.py"])


def inprocess(**kw):
    return gym_ctxbandits.run(ENV, AGENTS, **{**KW, **kw})


def files(out: Path) -> set[str]:
    return {p.name for p in out.glob("*.parquet")}


def test_host_port_gives_the_in_process_numbers_and_the_driver_writes(cluster, driver, monkeypatch, driver_writes):
    written = driver_writes
    table = gym_ctxbandits.run(ENV, AGENTS, out="r", backend="ray", address=cluster.address, **KW)
    pd.testing.assert_frame_equal(inprocess()[COLS], table[COLS])
    assert sorted(written) == sorted(files(driver / "r")) and len(written) == 9


def test_ray_client_gives_the_in_process_numbers(cluster, driver, monkeypatch, driver_writes):
    written = driver_writes
    table = gym_ctxbandits.run(ENV, AGENTS, out="r", backend="ray", address=f"ray://127.0.0.1:{cluster.client_port}",
                               **KW)
    pd.testing.assert_frame_equal(inprocess()[COLS], table[COLS])
    assert sorted(written) == sorted(files(driver / "r")) and len(written) == 9


def test_workers_write_a_uri_out_themselves(cluster, driver, monkeypatch, driver_writes):
    """A URI `--out` (here a mounted folder as file://) is written by the workers, not the driver."""
    written = driver_writes
    uri = f"file://{driver}/shared"
    table = gym_ctxbandits.run(ENV, AGENTS, out=uri, backend="ray", address=cluster.address, **KW)
    pd.testing.assert_frame_equal(inprocess()[COLS], table[COLS])
    assert written == [] and len(files(driver / "shared")) == 9


def test_ray_job_submit_gives_the_in_process_numbers(cluster, driver):
    """`ray job submit --working-dir . -- ctxbandits run --backend ray --address auto`, from a folder
    holding the checkout's packages and the user's module; the results go to a folder on the head."""
    for package in ("gym_ctxbandits", "agents"):
        shutil.copytree(ROOT / package, driver / package, ignore=shutil.ignore_patterns("__pycache__"))
    out = driver / "on-head"
    command = [RAY, "job", "submit", f"--address=http://127.0.0.1:{cluster.dashboard_port}", "--working-dir", ".",
               "--", "ctxbandits", "run", "--backend", "ray", "--address", "auto", "--env", ENV, "--agents",
               ",".join(AGENTS), "--import", "my_bandits.py", "--seeds", "3", "--horizon", "300", "--log-every", "50",
               "--batch", "2", "--out", str(out), "--quiet"]
    job = subprocess.run(command, env=dict(cluster.env, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}"),
                         capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    pd.testing.assert_frame_equal(inprocess()[COLS], load_results(out)[COLS])


def test_a_driver_without_the_token_is_one_line(cluster, driver):
    with token_env(RAY_AUTH_MODE="disabled"), pytest.raises(ClusterError) as err:
        gym_ctxbandits.run(ENV, ["LinUCB"], seeds=1, horizon=10, out="r", backend="ray", address=cluster.address)
    assert "\n" not in str(err.value) and "set RAY_AUTH_MODE=token and its token" in str(err.value)


def test_a_node_with_other_code_stops_the_run_in_one_line(cluster, driver):
    with pytest.raises(ClusterError) as err:
        gym_ctxbandits.run(ENV, AGENTS, out="r", backend="ray", address=cluster.address, ray={"code": "installed"},
                           **KW)
    message = str(err.value)
    assert "\n" not in message and "runs gym-ctxbandits 0.0.9" in message
    assert f"not the driver's {gym_ctxbandits.__version__}" in message
    assert "--ray-code ship" in message
    assert not files(driver / "r")


INTERRUPTED_SESSION = """
import sys, threading, time, _thread
from pathlib import Path

import gymnasium
import ray, gym_ctxbandits
from gym_ctxbandits.ray_backend import runtime_env

ray.init(address=sys.argv[1], log_to_driver=False, runtime_env=runtime_env())
out = Path(sys.argv[2])

def interrupt_after_the_first_file():
    while not list(out.glob("*.parquet")):
        time.sleep(0.05)
    _thread.interrupt_main()

threading.Thread(target=interrupt_after_the_first_file, daemon=True).start()
try:
    gym_ctxbandits.run("CtxBandit/Linear-v0", ["LinUCB"], out=out, backend="ray", seeds=list(range(4)),
                       horizon=3000, log_every=500, batch=1)
    sys.exit("not interrupted")
except KeyboardInterrupt:
    pass
end = time.monotonic() + 10
while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < end:
    time.sleep(0.2)
print("free CPUs", ray.available_resources().get("CPU", 0))
"""


def free_cpus(cluster, timeout: float = 15) -> float:
    """The cluster's free CPUs once they are all free, or when `timeout` has passed."""
    ray.init(address=cluster.address, log_to_driver=False)
    end = time.monotonic() + timeout
    while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < end:
        time.sleep(0.2)
    free = ray.available_resources().get("CPU", 0)
    ray.shutdown()
    return free


def resumes(cluster, driver, out: str, kept: dict, kw: dict) -> None:
    """The interrupted folder finishes with the plain run's numbers, its finished files not run again."""
    table = gym_ctxbandits.run(ENV, ["LinUCB"], out=out, backend="ray", address=cluster.address, **kw)
    pd.testing.assert_frame_equal(gym_ctxbandits.run(ENV, ["LinUCB"], **kw)[COLS], table[COLS])
    assert all((driver / out / name).stat().st_mtime_ns == t for name, t in kept.items())


def test_ctrl_c_on_the_command_stops_its_tasks_and_the_folder_resumes(cluster, driver):
    """SIGINT to `ctxbandits run` once a file is written: it exits 130 saying how to resume, its
    tasks end with it (the cluster's CPUs are free again), and the rerun finishes the folder."""
    kw = dict(seeds=list(range(4)), horizon=3000, log_every=500, batch=1)
    command = [sys.executable, "-m", "gym_ctxbandits.cli", "run", "--env", ENV, "--agents", "LinUCB", "--seeds", "4",
               "--horizon", "3000", "--log-every", "500", "--batch", "1", "--backend", "ray", "--address",
               cluster.address, "--out", "r", "--quiet"]
    run = subprocess.Popen(command, cwd=driver, stderr=subprocess.PIPE, text=True)
    while not files(driver / "r") and run.poll() is None:
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    err = run.communicate(timeout=60)[1]
    assert run.returncode == 130 and "interrupted; the finished jobs' files are kept" in err, err[-2000:]
    kept = {name: (driver / "r" / name).stat().st_mtime_ns for name in files(driver / "r")}
    assert 1 <= len(kept) < 4
    assert free_cpus(cluster) == 2, "the interrupted command's tasks still hold the cluster's CPUs"
    resumes(cluster, driver, "r", kept, kw)


def test_ctrl_c_in_a_connected_session_cancels_its_tasks(cluster, driver):
    """A session that connected to Ray itself (a notebook) and stays connected: Ctrl-C cancels the
    tasks in flight, which free the cluster's CPUs while the session lives. Run in a process of its
    own, so that a crash of Ray's cancellation would fail this test only."""
    session = subprocess.run([sys.executable, "-c", INTERRUPTED_SESSION, cluster.address, str(driver / "s")],
                             capture_output=True, text=True, timeout=180)
    assert session.returncode == 0 and "free CPUs 2.0" in session.stdout, session.stdout + session.stderr[-3000:]
    kept = {name: (driver / "s" / name).stat().st_mtime_ns for name in files(driver / "s")}
    assert 1 <= len(kept) < 4
    resumes(cluster, driver, "s", kept, dict(seeds=list(range(4)), horizon=3000, log_every=500, batch=1))


def running_a_unit(node: subprocess.Popen) -> bool:
    """True while a worker of `node` executes a unit: Ray titles a worker `ray::run` while it runs
    the task function `run`, `ray::IDLE` otherwise."""
    return any(title.startswith(b"ray::run") for _, title in session(node))


def test_a_node_dying_mid_run_costs_only_its_units(cluster, driver):
    """The second node is killed (SIGKILL to its raylet, agents and workers) while one of its
    workers runs a unit: Ray runs that unit again on the head, and the numbers are those of an
    uninterrupted run. Last in this module: the cluster keeps one node."""
    from ray.util.state import list_tasks

    kw = dict(seeds=list(range(6)), horizon=3000, log_every=500, batch=1)
    killed = threading.Event()

    def kill_second_node_while_it_runs_a_unit():
        while not killed.is_set():
            if running_a_unit(cluster.nodes[1]):
                cluster.kill(cluster.nodes[1])
                killed.set()
            time.sleep(0.02)

    threading.Thread(target=kill_second_node_while_it_runs_a_unit, daemon=True).start()
    table = gym_ctxbandits.run(ENV, ["LinUCB"], out="r", backend="ray", address=cluster.address, **kw)
    assert killed.is_set(), "the second node ran no unit"
    pd.testing.assert_frame_equal(gym_ctxbandits.run(ENV, ["LinUCB"], **kw)[COLS], table[COLS])
    end = time.monotonic() + 15                  # the tasks' events reach the state API a little later
    while time.monotonic() < end:
        tasks = list_tasks(address=cluster.address, limit=1000, filters=[("func_or_class_name", "=", "run")])
        if any(t.attempt_number >= 1 for t in tasks):
            break
        time.sleep(1)
    assert any(t.attempt_number >= 1 for t in tasks), "no unit was run again"
