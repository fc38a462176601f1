"""The torch device of a comparison (issue 22 item 4): `ctxbandits run --device`, the config's `device`,
`gym_ctxbandits.run(..., device=)`. No GPU is needed: CUDA is faked where the check must pass, and
a probe agent of a user's module shows which device reached it by the arm it pulls."""

import sys

import pandas as pd
import pytest

import agents
import gym_ctxbandits
from gym_ctxbandits import backends
from gym_ctxbandits.cli import main
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job
from gym_ctxbandits.results import load_results

torch = pytest.importorskip("torch")

PROBE = '''"""An agent that shows the device it was given: arm 1 on any device but the CPU, else arm 0."""
import numpy as np

import agents


@agents.register("Device-Probe")
class DeviceProbe:
    batched = True

    def __init__(self, *, device="cpu", seed=None):
        self.device = device

    def act(self, obs):
        arm = int(self.device != "cpu")
        return arm if np.ndim(obs) == 2 else np.full(len(obs), arm)

    def observe(self, obs, action, reward):
        pass

    def reset(self):
        pass
'''
LACKS = "--device cuda: CUDA is not available on this machine (torch.cuda.is_available() is False); use --device cpu"
COLS = ["env", "agent", "seed", "round", "reward", "regret", "cum_regret"]


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """probe.py in the test's folder (the current one); afterwards its agent is unregistered."""
    (tmp_path / "probe.py").write_text(PROBE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    registered = dict(agents.REGISTRY)
    yield tmp_path
    sys.modules.pop("probe", None)
    agents.REGISTRY.clear()
    agents.REGISTRY.update(registered)


def fake_gpus(monkeypatch, count: int) -> None:
    """This process sees `count` CUDA devices (0: none), whatever the machine has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)


def run(*flags: str, out: str = "r") -> pd.DataFrame:
    argv = ["run", "--import", "probe", "--env", "CtxBandit/Linear-v0", "--seeds", "2", "--horizon", "20",
            "--out", out, "--quiet", *flags]
    assert main(argv) == 0
    return load_results(out)


def test_the_device_reaches_the_torch_agents_in_every_worker(probe, monkeypatch):
    """--device cuda reaches an agent that takes `device` in the plain loop, a batch and a spawned
    worker; a numpy agent ignores it and keeps its files; an agent's own device kwarg wins."""
    fake_gpus(monkeypatch, 1)
    methods = []
    get_context = backends.multiprocessing.get_context
    monkeypatch.setattr(backends.multiprocessing, "get_context", lambda m=None: methods.append(m) or get_context(m))
    cpu = run("--agents", "Device-Probe,LinUCB")
    linucb = {p: p.stat().st_mtime_ns for p in probe.glob("r/Linear-v0__LinUCB__*.parquet")}
    for out, flags in (("r", ["--batch", "1"]), ("b", []), ("p", ["--backend", "processes", "--workers", "1"])):
        gpu = run("--agents", "Device-Probe,LinUCB", "--device", "cuda", *flags, out=out)
        mine, cpus = gpu[gpu.agent == "Device-Probe"], cpu[cpu.agent == "Device-Probe"]
        assert (mine.reward.to_numpy() != cpus.reward.to_numpy()).any(), flags     # it pulled arm 1
        pd.testing.assert_frame_equal(gpu[gpu.agent == "LinUCB"][COLS], cpu[cpu.agent == "LinUCB"][COLS])
    assert methods == ["spawn"]          # a forked worker could not use CUDA once the parent has checked it
    # in r the GPU run wrote files of its own beside the CPU's; LinUCB's were shared, not recomputed
    assert len(list(probe.glob("r/*Device-Probe*.parquet"))) == 4
    assert {p: p.stat().st_mtime_ns for p in probe.glob("r/Linear-v0__LinUCB__*.parquet")} == linucb
    own = run("--agents", "Device-Probe", "--device", "cuda", "--agent-kwargs", '{"device": "cpu"}', out="own")
    assert (own.reward.to_numpy() == cpu[cpu.agent == "Device-Probe"].reward.to_numpy()).all()


def test_the_config_key_and_the_python_api_take_the_device(probe, monkeypatch):
    fake_gpus(monkeypatch, 1)
    (probe / "c.toml").write_text('device = "cuda"\nenvs = ["CtxBandit/Linear-v0"]\nagents = ["Device-Probe"]\n')
    from_config = run("--config", "c.toml", out="c")
    flag_wins = run("--config", "c.toml", "--device", "cpu", out="f")
    api = gym_ctxbandits.run("CtxBandit/Linear-v0", "Device-Probe", seeds=2, horizon=20, device="cuda")
    assert (from_config.reward.to_numpy() == api.reward.to_numpy()).all()
    assert (from_config.reward.to_numpy() != flag_wins.reward.to_numpy()).any()


def test_cpu_jobs_keep_their_file_names_and_gpu_jobs_get_their_own():
    def job(device):
        return Job(EnvSpec("CtxBandit/Distance-v0"), AgentSpec("NeuralTS", {"steps": 5}), 3, 100, 10, device)

    assert job(None).filename == job("cpu").filename == "Distance-v0__NeuralTS__seed3__e44d655944.parquet"
    assert job("cuda").filename == job("cuda:1").filename != job("cpu").filename
    assert job("mps").filename not in (job("cpu").filename, job("cuda").filename)


@pytest.mark.parametrize("flags, gpus, line", [
    (["--device", "cuda"], 0, LACKS),
    (["--device", "mps"], 0, "--device mps: MPS is not available on this machine "
                             "(torch.backends.mps.is_available() is False); use --device cpu"),
    (["--device", "cuda:1"], 1, "--device cuda:1: this machine has 1 CUDA device(s), cuda:0 to cuda:0; use --device cpu"),
    (["--device", "tpu"], 0, "--device tpu: not a device; give 'cpu', 'cuda', 'cuda:<index>', 'mps' or 'auto'"),
    (["--config", "c.toml"], 0, LACKS),
])
def test_a_device_this_machine_lacks_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, capsys, flags, gpus,
                                                                         line):
    fake_gpus(monkeypatch, gpus)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text('device = "cuda"\nenvs = ["CtxBandit/Linear-v0"]\nagents = ["NeuralTS"]\n')
    argv = ["run", "--env", "CtxBandit/Linear-v0", "--agents", "LinUCB,NeuralTS", "--out", "r", "--quiet", *flags]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"ctxbandits: error: {line}\n"
    assert not (tmp_path / "r").exists()


def test_the_python_api_raises_a_value_error_before_writing(tmp_path, monkeypatch):
    fake_gpus(monkeypatch, 0)
    message = "device='cuda': CUDA is not available on this machine (torch.cuda.is_available() is False); use device='cpu'"
    with pytest.raises(ValueError) as err:
        gym_ctxbandits.run("CtxBandit/Linear-v0", "LinUCB", seeds=1, horizon=5, out=tmp_path / "r", device="cuda")
    assert str(err.value) == message and not (tmp_path / "r").exists()
