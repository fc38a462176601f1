"""gym-ctxbandits: the contextual bandits of five recent papers as Gymnasium environments.

`import gym_ctxbandits` registers every `CtxBandit/...-v0` id; `gym.make("CtxBandit/Logistic-v0")`
then builds one, and `gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`
runs N seeds as one batched environment.
"""

from gym_ctxbandits.registration import ENVIRONMENTS, register_all

register_all()

__all__ = ["ENVIRONMENTS", "register_all"]
__version__ = "0.1.0"
