"""Environment families; `gym_ctxbandits.registration` turns them into registered ids."""

from gym_ctxbandits.envs.allocation import ActionSetsEnv, FixedActionSetEnv, UnitCircleEnv
from gym_ctxbandits.envs.classification import ClassificationEnv, ClassTargetEnv, SupervisedEnv
from gym_ctxbandits.envs.click_models import CascadeEnv, ContextualCascadeEnv, DCMEnv, PBMEnv
from gym_ctxbandits.envs.core import CtxBanditEnv, CtxBanditVectorEnv
from gym_ctxbandits.envs.drifting import DriftingLinearEnv
from gym_ctxbandits.envs.moderation import HateSpeechEnv
from gym_ctxbandits.envs.nonstationary import PiecewiseBernoulliEnv, RussacEnv
from gym_ctxbandits.envs.pool import PoolEnv
from gym_ctxbandits.envs.ranking import DistinctItems, RankingEnv, RankingSpace, RankingVectorEnv
from gym_ctxbandits.envs.replay import OpenBanditEnv
from gym_ctxbandits.envs.retiring import RetiringItemsEnv
from gym_ctxbandits.envs.schedule import ScheduledEnv
from gym_ctxbandits.envs.synthetic import (
    BernoulliLogisticEnv,
    DistanceEnv,
    LinearEnv,
    LogisticEnv,
    NeuralLogisticEnv,
    QuadraticEnv,
)
from gym_ctxbandits.envs.testbeds import FiniteLinearEnv, MLPTeacherEnv, SphereLinearEnv, VectorQuadraticEnv

__all__ = [
    "ActionSetsEnv", "BernoulliLogisticEnv", "ClassTargetEnv", "ClassificationEnv", "CtxBanditEnv", "CtxBanditVectorEnv", "DistanceEnv",
    "DriftingLinearEnv", "FiniteLinearEnv", "FixedActionSetEnv", "HateSpeechEnv", "LinearEnv", "LogisticEnv", "MLPTeacherEnv", "NeuralLogisticEnv", "OpenBanditEnv",
    "PoolEnv", "QuadraticEnv", "RetiringItemsEnv", "SphereLinearEnv", "SupervisedEnv", "UnitCircleEnv", "VectorQuadraticEnv",
    # Rankings (issue 50)
    "CascadeEnv", "ContextualCascadeEnv", "DCMEnv", "DistinctItems", "PBMEnv", "RankingEnv", "RankingSpace",
    "RankingVectorEnv",
    # Non-stationary (issue 51)
    "PiecewiseBernoulliEnv", "RussacEnv", "ScheduledEnv",
]
