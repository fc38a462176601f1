# examples/digits_bandit.py
"""scikit-learn's handwritten digits as a 10-armed bandit: arm k is "the image shows digit k".

Any supervised dataset is a bandit in one call through CtxBandit/Supervised-v0: arrays (numpy,
pandas) or a source string (a CSV or Parquet file, `openml:NAME`, `hf:NAME`, `sklearn:LOADER`;
docs/datasets.md lists them). Arrays work from Python; the command line takes the source string.
"""

from sklearn.datasets import load_digits

import gym_ctxbandits
from gym_ctxbandits.experiment import AgentSpec, EnvSpec

X, y = load_digits(return_X_y=True)                  # 1,797 images of 64 pixels, 10 classes
digits = EnvSpec("CtxBandit/Supervised-v0", {"X": X, "y": y})   # or {"source": "sklearn:load_digits"}
linucb = AgentSpec("LinUCB", {"alpha": 0.1}, "LinUCB (alpha=0.1)")  # a tenth of the theory radius: d = 640
table = gym_ctxbandits.run(digits, ["Random", linucb], seeds=2, horizon=500)
final = table[table["round"] == 500].groupby("agent")["cum_regret"].mean()
print(final.round(0))                                 # Random about 450, LinUCB about 200
assert final["LinUCB (alpha=0.1)"] < 0.6 * final["Random"], "LinUCB should learn the digits"
