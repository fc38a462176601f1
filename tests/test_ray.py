"""The Ray backend's driver side without a cluster (issue 23): results returned to the driver and
written there, the code shipped and checked, addresses, URI results folders, resources and the
bound on units in flight, faults and Ctrl-C, all on a stand-in for Ray that runs the tasks in
this process when they are waited on. A real two-node cluster: tests/test_ray_cluster.py (slow).
"""

from __future__ import annotations

import pickle
import re
import socket
import sys
import types
from pathlib import Path

import pandas as pd
import pytest

import gym_ctxbandits
from gym_ctxbandits import config as cfg
from gym_ctxbandits import ray_backend, ray_task
from gym_ctxbandits.cli import main
from gym_ctxbandits.experiment import make_jobs
from gym_ctxbandits.ray_backend import ClusterError, RayOptions
from gym_ctxbandits.results import ResultCorrupt, is_complete, load_results, read_checked

ENV = "CtxBandit/Linear-v0"
AGENTS = ["LinUCB", "LinTS", "Random"]
COLS = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
KW = dict(seeds=[0, 1, 2], horizon=40, log_every=10, batch=2)


class TaskError(Exception):
    """ray.exceptions.RayTaskError: the task raised `cause`."""

    def __init__(self, cause):
        super().__init__(f"task failed: {cause!r}\nTraceback ...")
        self.cause = cause


class RayError(Exception):
    """ray.exceptions.RayError: Ray gave up on a task (its node died, retries included)."""


class FakeRay(types.ModuleType):
    """The part of Ray's API the backend uses. A task runs in this process when it is waited on
    (`run` replaces what it computes); `fail` maps a submission's index to the exception Ray
    would raise for it; `interrupt_at` makes the n-th wait a Ctrl-C."""

    def __init__(self, cpus=2, gpus=0, run=None, fail=None, interrupt_at=None, init_error=None):
        super().__init__("ray")
        self.calls, self.initialized, self.resources = [], False, {"CPU": cpus, **({"GPU": gpus} if gpus else {})}
        self.run, self.fail, self.interrupt_at, self.init_error = run, fail or {}, interrupt_at, init_error
        self.in_flight, self.most_in_flight, self.submitted, self.waits = set(), 0, 0, 0
        self.exceptions = types.SimpleNamespace(RayTaskError=TaskError, RayError=RayError)
        self.cloudpickle = types.SimpleNamespace(register_pickle_by_value=lambda m: self.calls.append(("by value",
                                                                                                       m.__name__)))
        self.util = types.SimpleNamespace(get_node_ip_address=lambda: "10.0.0.7")

    def is_initialized(self):
        return self.initialized

    def init(self, **kwargs):
        self.calls.append(("init", kwargs))
        error = self.init_error             # an exception every time, or a list of them in turn (then none)
        if isinstance(error, list):
            error = error.pop(0) if error else None
        if error:
            raise error
        self.initialized = True

    def shutdown(self):
        self.calls.append(("shutdown",))
        self.initialized = False

    def cluster_resources(self):
        return dict(self.resources)

    def get_gpu_ids(self):
        return []

    def remote(self, **decorator):
        def wrap(fn):
            return Remote(self, fn, decorator)
        return wrap

    def wait(self, refs, num_returns=1):
        self.waits += 1
        if self.waits == self.interrupt_at:
            raise KeyboardInterrupt
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        from threadpoolctl import threadpool_limits

        self.in_flight.discard(ref)
        if ref.index in self.fail:
            raise self.fail[ref.index]
        with threadpool_limits(limits=None):   # the task limits BLAS threads: undone after it
            return (self.run or ref.fn)(*ref.args)

    def cancel(self, ref, force=False):
        self.calls.append(("cancel", ref.index, force))


class Ref:
    def __init__(self, fn, args, options, index):
        self.fn, self.args, self.options, self.index = fn, args, options, index


class Remote:
    def __init__(self, ray, fn, options):
        self.ray, self.fn, self.opts = ray, fn, options

    def options(self, **options):
        return Remote(self.ray, self.fn, {**self.opts, **options})

    def remote(self, *args):
        ray = self.ray
        ref = Ref(self.fn, args, self.opts, ray.submitted)
        ray.submitted += 1
        ray.in_flight.add(ref)
        ray.most_in_flight = max(ray.most_in_flight, len(ray.in_flight))
        ray.calls.append(("task", self.fn.__name__, len(pickle.loads(args[0])), self.opts, args))
        return ref


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """A FakeRay as `ray`; the test's folder is the current one."""
    monkeypatch.chdir(tmp_path)
    ray = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    return ray


def test_tasks_return_tables_and_the_driver_writes_them(fake, monkeypatch, tmp_path, driver_writes):
    """One task per unit; a task gets no path to write to (its tables come back), the driver writes
    every file; the code goes in the runtime_env; the numbers are the in-process run's."""
    written = driver_writes
    local = gym_ctxbandits.run(ENV, AGENTS, out="a", **KW)
    on_ray = gym_ctxbandits.run(ENV, AGENTS, out="b", backend="ray", **KW)
    pd.testing.assert_frame_equal(local[COLS], on_ray[COLS])
    init = fake.calls[0]
    assert init[0] == "init" and init[1]["address"] is None and init[1]["include_dashboard"] is False
    shipped = {Path(p).name for p in init[1]["runtime_env"]["py_modules"]}
    assert shipped == {"gym_ctxbandits", "agents"} and fake.calls[-1] == ("shutdown",)
    assert ("by value", "gym_ctxbandits.ray_task") in fake.calls and ("by value", "gym_ctxbandits.codehash") in fake.calls
    tasks = [c for c in fake.calls if c[0] == "task"]
    assert sorted(n for _, _, n, _, _ in tasks) == [1, 1, 1, 2, 2, 2]     # 3 agents x (a batch of 2 seeds, 1 seed)
    assert all(opts == {"max_retries": 3, "retry_exceptions": False, "num_cpus": 1, "num_gpus": 0}
               for *_, opts, _ in tasks)
    assert all(args[-1] is None and str(tmp_path) not in repr(args) for *_, args in tasks)   # no place to write
    assert sorted(written) == sorted(p.name for p in (tmp_path / "b").glob("*.parquet")) and len(written) == 9


def test_user_modules_are_shipped_and_imported_by_name(fake, tmp_path):
    """A `--import` .py file travels in py_modules and the worker imports it by its module name;
    installed packages (the standard library, site-packages) are the cluster's own."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my_agent.py").write_text("import agents\nfrom agents.random import RandomAgent\n"
                                                   "agents.register('Mine')(RandomAgent)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        env = ray_backend.runtime_env(["mine/my_agent.py", "json", "numpy.linalg"], str(tmp_path))
    finally:
        sys.path.remove(str(tmp_path))
    assert [Path(p).name for p in env["py_modules"]] == ["gym_ctxbandits", "agents", "my_agent.py"]
    assert ray_backend.runtime_env(["json"], str(tmp_path), code="installed") == {}
    assert ray_backend.worker_modules(["mine/my_agent.py", "pkg.mod"]) == ["my_agent", "pkg.mod"]


def test_the_bound_on_units_in_flight(fake, tmp_path, monkeypatch):
    """40 units with max_in_flight 3: never more than 3 submitted and not collected, and 3 reached;
    the default bound is twice the cluster's CPU slots, at least 16."""
    units = [[job] for job in make_jobs([ENV], ["Random"], 40, 5)]
    ray_backend.run_ray(units, tmp_path / "r", False, options={"max_in_flight": 3})
    assert fake.most_in_flight == 3 and len(list((tmp_path / "r").glob("*.parquet"))) == 40
    for cpus, per_unit, expected in [(2, 1, 16), (12, 1, 24), (20, 2, 20)]:
        ray = FakeRay(cpus=cpus, run=lambda *args: ("tables", [], []))
        monkeypatch.setitem(sys.modules, "ray", ray)
        ray_backend.run_ray(units, tmp_path / f"d{cpus}-{per_unit}", False, options={"cpus_per_unit": per_unit})
        assert ray.most_in_flight == expected


def test_units_on_cuda_ask_for_gpus_and_numpy_units_do_not(fake, tmp_path):
    """--device cuda on the Ray backend: a torch agent's unit asks for gpus_per_unit GPUs, a numpy
    agent's none; CUDA is the cluster's, so this machine (no GPU) does not refuse the device, and a
    cluster without GPUs now is a warning (an autoscaler may add one), not an error."""
    from gym_ctxbandits.compare import check_device

    assert check_device("cuda:3", cluster=True) == "cuda:3"
    fake.run = lambda unit, *args: ("tables", [], [])         # nothing to compute: the requests are the point
    units = [[job] for job in make_jobs([ENV], ["NeuralUCB", "LinUCB"], 2, 5, device="cuda")]
    with pytest.warns(UserWarning, match="has 0 GPUs now and a unit asks for 0.25"):
        ray_backend.run_ray(units, tmp_path / "r", False, options={"gpus_per_unit": 0.25, "cpus_per_unit": 2})
    requests = {(c[3]["num_cpus"], c[3]["num_gpus"]) for c in fake.calls if c[0] == "task"}
    assert requests == {(2, 0.25), (2, 0)}
    gpu_tasks = [c for c in fake.calls if c[0] == "task" and c[3]["num_gpus"]]
    assert len(gpu_tasks) == 2


def test_a_worker_with_other_code_stops_the_run_in_one_line(fake, monkeypatch, tmp_path, capsys):
    other = {**ray_task.code_identity(), "version": "0.0.9", "code": "0123456789ab",
             "folder": "/opt/site-packages/gym_ctxbandits"}

    def worker(*args):                            # the worker's own gym-ctxbandits is `other`
        with monkeypatch.context() as m:
            m.setattr(ray_task, "code_identity", lambda: other)
            return ray_task.run(*args)

    fake.run = worker
    assert main(["run", "--env", ENV, "--agents", ",".join(AGENTS), "--seeds", "2", "--horizon", "20", "--out", "r",
                 "--backend", "ray", "--ray-code", "installed", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the Ray worker on " in err and "(10.0.0.7) runs gym-ctxbandits 0.0.9 (code " \
        f"0123456789ab) from /opt/site-packages/gym_ctxbandits, not the driver's {gym_ctxbandits.__version__}" in err
    assert "or let the run ship its code (--ray-code ship, the default)" in err
    assert fake.calls[-1] == ("shutdown",) and not list((tmp_path / "r").glob("*.parquet"))


def test_identity_check_messages_and_dependency_warnings(fake, monkeypatch):
    """check_identity (in the worker) against the driver's identity: equal code passes, another
    numpy is a warning; a package that cannot be imported is a reason naming the error."""
    mine = ray_task.code_identity()
    assert mine["version"] == gym_ctxbandits.__version__ and len(mine["code"]) == 12
    assert ray_task.check_identity(mine, shipped=True) == (None, [])
    older = {**mine, "dependencies": {**mine["dependencies"], "numpy": "1.0.0"}}
    reason, warnings = ray_task.check_identity(older, shipped=True)
    assert reason is None and warnings == [f"the Ray worker on {socket.gethostname()} (10.0.0.7) has numpy "
                                           f"{mine['dependencies']['numpy']}, the driver 1.0.0: the numbers may differ "
                                           "in the last digits"]

    def missing():
        raise ModuleNotFoundError("No module named 'gymnasium'")

    monkeypatch.setattr(ray_task, "code_identity", missing)
    reason, _ = ray_task.check_identity(mine, shipped=True)
    assert reason.endswith("cannot import gym-ctxbandits (ModuleNotFoundError: No module named 'gymnasium'): install "
                           "gym-ctxbandits and its dependencies on every node")


def test_the_code_digest_covers_every_source_file(tmp_path):
    """A copy of the packages has the running code's digest; one more byte in one .py or .toml file
    of either package changes it; caches do not count."""
    import shutil

    roots = {p: tmp_path / p for p in ray_task.PACKAGES}
    for package, root in roots.items():
        shutil.copytree(Path(gym_ctxbandits.__file__).parents[1] / package, root,
                        ignore=shutil.ignore_patterns("__pycache__"))
    digest = ray_task.source_digest(roots)
    assert digest == ray_task.code_identity()["code"]
    (roots["agents"] / "__pycache__").mkdir()
    (roots["agents"] / "__pycache__" / "x.py").write_text("cache")
    assert ray_task.source_digest(roots) == digest
    for changed in (roots["agents"] / "linear.py", roots["gym_ctxbandits"] / "datasets" / "manifest.toml"):
        text = changed.read_text()
        changed.write_text(text + "\n")
        assert ray_task.source_digest(roots) != digest, changed
        changed.write_text(text)


@pytest.mark.parametrize("address,host_port", [(None, None), ("auto", None), ("10.0.0.5:6379", ("10.0.0.5", 6379)),
                                               ("ray://head.example:10001", ("head.example", 10001)),
                                               ("[::1]:6380", ("::1", 6380))])
def test_address_forms(address, host_port):
    assert ray_backend.parse_address(address) == host_port


@pytest.mark.parametrize("address,message", [
    ("http://head:8265", "that is a dashboard's (Ray Jobs') address"), ("head", "not an address"),
    ("tcp://head:1", "unknown scheme tcp://"), ("head:port", "not an address"), ("ray://head", "not an address")])
def test_bad_addresses_are_one_line(address, message):
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        ray_backend.parse_address(address)
    assert "\n" not in str(err.value) and "give auto, HOST:PORT" in str(err.value)


def test_an_unreachable_address_is_one_line_before_ray_tries(fake, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                 # bound, not listening: the connection is refused
        assert main(["run", "--env", ENV, "--agents", "LinUCB", "--seeds", "1", "--horizon", "10", "--out", "r",
                     "--backend", "ray", "--address", f"127.0.0.1:{port}", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--address 127.0.0.1:{port}: nothing answers at 127.0.0.1:{port}" in err
    assert not [c for c in fake.calls if c[0] == "init"]


def test_connection_failures_are_one_line(fake):
    """What ray.init raises (no cluster for "auto", a token the cluster wants) as one line."""
    units = [[job] for job in make_jobs([ENV], ["Random"], 1, 5)]
    fake.init_error = ConnectionError("Could not find any running Ray instance. Please specify the one to connect to")
    with pytest.raises(ClusterError, match=r"^--address auto: cannot connect \(Could not find any running Ray "
                                           r"instance. Please specify the one to connect to\)$"):
        ray_backend.run_ray(units, Path("r"), False, address="auto")

    class AuthenticationError(Exception):
        pass

    try:
        try:
            raise AuthenticationError("RPC error: InvalidAuthToken: Authentication token is missing or incorrect.")
        except AuthenticationError as cause:
            raise RuntimeError("Failed to connect to GCS.") from cause
    except RuntimeError as wrapped:
        fake.init_error = ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379")
        fake.init_error.__cause__ = wrapped
    with pytest.raises(ClusterError, match="uses token authentication: set RAY_AUTH_MODE=token and its token"):
        ray_backend.run_ray(units, Path("r"), False, address="auto")


def client_server_died(port=23000):
    """What Ray 2.60's Ray Client raises when the head's server process for the driver died as it started
    (ray-project/ray#63202): a header line over the server's traceback."""
    return ConnectionAbortedError(
        "Initialization failure from server:\nTraceback (most recent call last):\n  File \"proxier.py\", line 771, "
        "in Datapath\n    raise RuntimeError(\nRuntimeError: Starting Ray client server failed. See "
        f"ray_client_server_{port}.err for detailed logs.\n")


def test_a_client_server_that_died_as_it_started_is_connected_again(fake, monkeypatch):
    monkeypatch.setattr(ray_backend, "check_reachable", lambda address: None)     # the head's port answers
    units = [[job] for job in make_jobs([ENV], ["Random"], 1, 5)]
    fake.init_error = [client_server_died(23000), client_server_died(23001)]
    with pytest.warns(UserWarning) as warned:
        ray_backend.run_ray(units, Path("r"), False, address="ray://127.0.0.1:10001")
    assert [str(w.message) for w in warned] == [
        "--address ray://127.0.0.1:10001: the head's Ray Client server could not start this driver's server "
        f"(RuntimeError: Starting Ray client server failed. See ray_client_server_{port}.err for detailed logs.); "
        f"connecting again ({attempt} of 3)" for port, attempt in ((23000, 2), (23001, 3))]
    assert [c[0] for c in fake.calls].count("init") == 3 and is_complete(units[0][0], Path("r"))


def test_a_client_server_that_keeps_dying_is_one_line_naming_the_ray_issue(fake, monkeypatch, capsys):
    monkeypatch.setattr(ray_backend, "check_reachable", lambda address: None)
    fake.init_error = client_server_died()
    with pytest.warns(UserWarning, match="connecting again"):
        assert main(["run", "--env", ENV, "--agents", "Random", "--seeds", "1", "--horizon", "5", "--out", "r",
                     "--quiet", "--backend", "ray", "--address", "ray://127.0.0.1:10001"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "ctxbandits: error: --address ray://127.0.0.1:10001: cannot connect (the head's Ray Client server could not "
        "start this driver's server 3 times: RuntimeError: Starting Ray client server failed.")
    assert "ray-project/ray#63202" in err and "ray job submit" in err
    assert [c[0] for c in fake.calls].count("init") == 3


def test_other_connection_failures_are_not_tried_again(fake):
    fake.init_error = ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:10001")
    with pytest.raises(ClusterError, match=r"cannot connect \(Failed to connect to Ray cluster at 127.0.0.1:10001\)$"):
        ray_backend.connect(fake, "ray://127.0.0.1:10001", {})
    assert len(fake.calls) == 1


def test_missing_extras_are_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", FakeRay())
    monkeypatch.setitem(sys.modules, "grpc", None)
    argv = ["run", "--env", ENV, "--agents", "LinUCB", "--seeds", "1", "--horizon", "10", "--out", "r", "--quiet",
            "--backend", "ray"]
    assert main([*argv, "--address", "ray://127.0.0.1:10001"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Ray Client needs ray[client]: pip install -e '.[ray]'" in err
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the Ray backend needs Ray: pip install -e '.[ray]'" in err


def test_a_unit_lost_after_its_retries_keeps_the_others_and_says_resume(fake, tmp_path, capsys):
    fake.fail = {2: RayError("NodeDiedError")}
    assert main(["run", "--env", ENV, "--agents", ",".join(AGENTS), "--seeds", "1", "--horizon", "20", "--out", "r",
                 "--backend", "ray", "--max-in-flight", "1", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Ray lost the unit of Linear-v0__Random__seed0__" in err
    assert "3 retries included); the finished jobs' files are kept: run the same command again to resume" in err
    assert len(list((tmp_path / "r").glob("*.parquet"))) == 2


def test_a_tasks_own_error_is_raised_as_itself(fake):
    fake.fail = {0: TaskError(ValueError("agent 'LinUCB' returned action 7"))}
    with pytest.raises(ValueError, match="^agent 'LinUCB' returned action 7$"):
        gym_ctxbandits.run(ENV, ["LinUCB"], seeds=1, horizon=10, out="r", backend="ray")


@pytest.mark.parametrize("connected", [False, True], ids=["command", "connected session"])
def test_ctrl_c_stops_the_units_in_flight_and_the_folder_resumes(fake, tmp_path, connected):
    """Ctrl-C at the third wait: the two units collected are written; the units in flight stop with
    the connection the run made (ray.shutdown), or, in a session that connected itself and stays
    connected, are cancelled (without force: Ray 2.60's force-cancel can abort the driver); the
    rerun computes only the rest."""
    kw = dict(seeds=list(range(6)), horizon=20, log_every=10, batch=1)
    fake.interrupt_at, fake.initialized = 3, connected
    with pytest.raises(KeyboardInterrupt):
        gym_ctxbandits.run(ENV, ["LinUCB"], out="r", backend="ray", ray={"max_in_flight": 4}, **kw)
    kept = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "r").glob("*.parquet")}
    cancelled = sorted(c[1:] for c in fake.calls if c[0] == "cancel")
    assert len(kept) == 2 and (fake.calls[-1] == ("shutdown",)) is not connected
    assert cancelled == ([(2, False), (3, False), (4, False), (5, False)] if connected else [])
    assert not list((tmp_path / "r").glob(".*.claim"))
    table = gym_ctxbandits.run(ENV, ["LinUCB"], out="r", **kw)
    pd.testing.assert_frame_equal(gym_ctxbandits.run(ENV, ["LinUCB"], **kw)[COLS], table[COLS])
    assert {n: (tmp_path / "r" / n).stat().st_mtime_ns for n in kept} == kept


def test_uri_results_folder_round_trip(tmp_path, monkeypatch, capsys):
    """--out file:///...: the same files, checksums, resume and report as a local folder."""
    monkeypatch.chdir(tmp_path)
    uri = f"file://{tmp_path}/u"
    argv = ["run", "--env", ENV, "--agents", "LinUCB,Random", "--seeds", "2", "--horizon", "30", "--log-every", "10",
            "--quiet"]
    assert main([*argv, "--out", uri]) == 0 and main([*argv, "--out", "local"]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(load_results("local")[COLS], load_results(uri)[COLS])
    folder = tmp_path / "u"
    assert {p.name for p in folder.glob("*.parquet")} == {p.name for p in (tmp_path / "local").glob("*.parquet")}
    assert {"manifest.json", "summary.md", "regret.png"} <= {p.name for p in folder.iterdir()}
    assert not list(folder.glob(".tmp-*"))
    mtimes = {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")}
    assert main([*argv, "--out", uri]) == 0                              # resumes: nothing run again
    assert {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")} == mtimes
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gym_ctxbandits.store import location

    victim = sorted(folder.glob("*.parquet"))[0]              # one value changed, the checksum kept
    arrow = pq.read_table(victim)
    altered = arrow.to_pandas()
    altered.loc[1, "reward"] += 1
    pq.write_table(pa.Table.from_pandas(altered, preserve_index=False).replace_schema_metadata(arrow.schema.metadata),
                   victim)
    with pytest.raises(ResultCorrupt, match=re.escape(f"{uri}/{victim.name} is damaged")):
        read_checked(location(uri) / victim.name)
    job = next(j for j in make_jobs([ENV], ["LinUCB", "Random"], 2, 30, 10) if j.filename == victim.name)
    with pytest.warns(UserWarning, match="will be run again"):
        assert not is_complete(job, location(uri))


def test_workers_write_a_uri_folder_themselves(fake, monkeypatch, tmp_path, driver_writes):
    """With a URI --out the tasks write their files there and return only the names."""
    written = driver_writes
    uri = f"file://{tmp_path}/u"
    table = gym_ctxbandits.run(ENV, AGENTS, out=uri, backend="ray", **KW)
    pd.testing.assert_frame_equal(gym_ctxbandits.run(ENV, AGENTS, **KW)[COLS], table[COLS])
    assert written == [] and len(list((tmp_path / "u").glob("*.parquet"))) == 9
    assert {c[4][-1] for c in fake.calls if c[0] == "task"} == {uri}


@pytest.mark.parametrize("uri,message", [
    ("s3://my-bucket/results/x", "out 's3://my-bucket/results/x': no filesystem library for s3:// here (Install s3fs "
                                 "to access S3); install it on the driver and on every node"),
    ("nope://x/y", "out 'nope://x/y': no filesystem knows nope:// (Protocol not known: nope)")])
def test_a_uri_without_its_filesystem_library_is_one_line(uri, message, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "s3fs", None)           # as in a fresh install of the extras: no s3fs
    assert main(["run", "--env", ENV, "--agents", "LinUCB", "--seeds", "1", "--horizon", "10", "--out", uri,
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []


def test_ray_options_from_flags_and_config(tmp_path):
    (tmp_path / "c.toml").write_text('envs = ["a"]\nagents = ["b"]\nray = {code = "installed", max_in_flight = 64}\n')
    assert cfg.load(tmp_path / "c.toml").ray == {"code": "installed", "max_in_flight": 64}
    from gym_ctxbandits.cli import build_parser, comparison_from_args

    args = build_parser().parse_args(["run", "--config", str(tmp_path / "c.toml"), "--gpus-per-unit", "0.5",
                                      "--out", "r"])
    assert comparison_from_args(args).ray == {"code": "installed", "max_in_flight": 64, "gpus_per_unit": 0.5}
    for bad, match in [('ray = {cores = 2}', r"config key 'ray': ray options \['cores'\] are unknown"),
                       ('ray = {cpus_per_unit = 0}', "config key 'ray': ray cpus_per_unit must be a number > 0"),
                       ('ray = {code = "copy"}', "ray code must be one of")]:
        (tmp_path / "c.toml").write_text(f'envs = ["a"]\nagents = ["b"]\n{bad}\n')
        with pytest.raises(cfg.ConfigError, match=match):
            cfg.load(tmp_path / "c.toml")
    with pytest.raises(ValueError, match="max_in_flight must be an integer >= 1"):
        RayOptions(max_in_flight=0)
