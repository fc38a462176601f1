"""gym-ctxbandits: the contextual bandits of five recent papers as Gymnasium environments.

`import gym_ctxbandits` registers every `CtxBandit/...-v0` id; `gym.make("CtxBandit/Logistic-v0")`
then builds one, and `gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`
runs N seeds as one batched environment. `gym_ctxbandits.run(envs, agents, seeds, horizon, out)`
runs a comparison (see `compare.py`); the `ctxbandits` command does the same from a shell.
`gym_ctxbandits.log(env_id, agent, n_rounds, seed, out)` logs bandit feedback for off-policy
evaluation (`feedback.py`), which `gym_ctxbandits.ope` estimates from.
"""

import importlib.util
import warnings

from gym_ctxbandits.registration import ENVIRONMENTS, register_all

register_all()


def _check_agents_package() -> None:
    """Warn when the top-level `agents` Python would import is not this project's agent zoo (the
    OpenAI Agents SDK also installs one): the envs work, but `agents.make` and the runner would not."""
    try:
        spec = importlib.util.find_spec("agents")
    except (ImportError, ValueError):
        return
    if spec is None or spec.origin is None:
        return
    try:
        ours = "__gym_ctxbandits__" in open(spec.origin, encoding="utf-8").read()
    except OSError:
        return
    if not ours:
        warnings.warn(f"`import agents` would load {spec.origin}, which is not gym-ctxbandits' agent zoo: another "
                      "package (e.g. the OpenAI Agents SDK) installs a top-level `agents`. The environments work; "
                      "for the agents and `ctxbandits run`, use a virtual environment without that package.",
                      UserWarning, stacklevel=2)


_check_agents_package()

from gym_ctxbandits.compare import run  # noqa: E402
from gym_ctxbandits.jobs import AgentSpec, EnvSpec  # noqa: E402
from gym_ctxbandits.feedback import log  # noqa: E402
from gym_ctxbandits.results import load_results  # noqa: E402

__all__ = ["ENVIRONMENTS", "AgentSpec", "EnvSpec", "load_results", "log", "register_all", "run"]
__version__ = "0.18.0"
