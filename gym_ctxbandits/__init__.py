"""gym-ctxbandits: the contextual bandits of five recent papers as Gymnasium environments.

`import gym_ctxbandits` registers every `CtxBandit/...-v0` id; `gym.make("CtxBandit/Logistic-v0")`
then builds one, and `gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`
runs N seeds as one batched environment. `gym_ctxbandits.run(envs, agents, seeds, horizon, out)`
runs a comparison (see `compare.py`); the `ctxbandits` command does the same from a shell.
"""

from gym_ctxbandits.registration import ENVIRONMENTS, register_all

register_all()

from gym_ctxbandits.compare import run  # noqa: E402
from gym_ctxbandits.experiment import AgentSpec, EnvSpec  # noqa: E402
from gym_ctxbandits.results import load_results  # noqa: E402

__all__ = ["ENVIRONMENTS", "AgentSpec", "EnvSpec", "load_results", "register_all", "run"]
__version__ = "0.1.0"
