"""Native vector environments, one per family: `gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`.

Each is `CtxBanditVectorEnv` bound to its family, so the single and vector envs share the math.
"""

from gym_ctxbandits import envs
from gym_ctxbandits.envs.core import vector_env
from gym_ctxbandits.envs.ranking import ranking_vector_env

ActionSetsVectorEnv = vector_env(envs.ActionSetsEnv, __name__)
BernoulliLogisticVectorEnv = vector_env(envs.BernoulliLogisticEnv, __name__)
ClassificationVectorEnv = vector_env(envs.ClassificationEnv, __name__)
ClassTargetVectorEnv = vector_env(envs.ClassTargetEnv, __name__)
DistanceVectorEnv = vector_env(envs.DistanceEnv, __name__)
DriftingLinearVectorEnv = vector_env(envs.DriftingLinearEnv, __name__)
FiniteLinearVectorEnv = vector_env(envs.FiniteLinearEnv, __name__)
FixedActionSetVectorEnv = vector_env(envs.FixedActionSetEnv, __name__)
HateSpeechVectorEnv = vector_env(envs.HateSpeechEnv, __name__)
LinearVectorEnv = vector_env(envs.LinearEnv, __name__)
LogisticVectorEnv = vector_env(envs.LogisticEnv, __name__)
MLPTeacherVectorEnv = vector_env(envs.MLPTeacherEnv, __name__)
NeuralLogisticVectorEnv = vector_env(envs.NeuralLogisticEnv, __name__)
QuadraticVectorEnv = vector_env(envs.QuadraticEnv, __name__)
RetiringItemsVectorEnv = vector_env(envs.RetiringItemsEnv, __name__)
SphereLinearVectorEnv = vector_env(envs.SphereLinearEnv, __name__)
SupervisedVectorEnv = vector_env(envs.SupervisedEnv, __name__)
UnitCircleVectorEnv = vector_env(envs.UnitCircleEnv, __name__)
VectorQuadraticVectorEnv = vector_env(envs.VectorQuadraticEnv, __name__)
# Non-stationary (issue 51)
PiecewiseBernoulliVectorEnv = vector_env(envs.PiecewiseBernoulliEnv, __name__)
RussacVectorEnv = vector_env(envs.RussacEnv, __name__)
ScheduledVectorEnv = vector_env(envs.ScheduledEnv, __name__)
# Rankings (issue 50)
CascadeVectorEnv = ranking_vector_env(envs.CascadeEnv, __name__)
ContextualCascadeVectorEnv = ranking_vector_env(envs.ContextualCascadeEnv, __name__)
DCMVectorEnv = ranking_vector_env(envs.DCMEnv, __name__)
PBMVectorEnv = ranking_vector_env(envs.PBMEnv, __name__)
