"""The agent tests' shared fixture: torch pinned to one intra-op thread for a module's tests."""

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread while a module's tiny networks train (restored after), as the bench runner
    plays them (`bench.run.one_torch_thread`): a thread per core only spin-waits on 2 busy cores."""
    from gym_ctxbandits.bench.run import one_torch_thread

    with one_torch_thread():
        yield
