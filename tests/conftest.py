"""Session-wide test settings.

One BLAS / OpenMP thread per process, for this process and the scripts the tests start (set
before numpy or torch is imported; a value the caller exported wins). The tests' networks and
matrices are tiny, so a second thread gains nothing, and on a machine whose cores are busy (a
CI box running other jobs, two pytest sessions at once) multi-threaded torch spin-waits: a
script's smoke run measured 19 s with one thread and 130 s with two on 2 loaded cores. The
numbers tests compare are computed under the same setting on both sides.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
