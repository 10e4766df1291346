"""Rows of equal timestamps in another order: what an unstable sort may give on another
machine (numpy picks its sort kernels by the CPU's SIMD features) or with other versions.
The tests that read a schedlab trace through LISA run once as LISA sorts here and once with
`DataFrame.sort_index` shuffling every tie (seeded), so that no expectation hangs on the
order of rows that share a timestamp."""

import contextlib

import numpy as np
import pandas as pd


@contextlib.contextmanager
def shuffled_ties(seed: int):
    """Within the block, `DataFrame.sort_index()` returns equal timestamps in a seeded random
    order (a shuffle, then a stable sort); a call with arguments is left alone."""
    original = pd.DataFrame.sort_index
    rng = np.random.default_rng(seed)

    def sort_index(self, *args, **kwargs):
        if args or set(kwargs) - {"inplace"}:
            return original(self, *args, **kwargs)
        out = original(self.iloc[rng.permutation(len(self))], kind="stable")
        if kwargs.get("inplace"):
            self._update_inplace(out)
            return None
        return out

    pd.DataFrame.sort_index = sort_index
    try:
        yield
    finally:
        pd.DataFrame.sort_index = original


def tie_order_fixture():
    """A module-scoped fixture, run once per order: as sorted here, then with ties shuffled."""
    import pytest

    @pytest.fixture(scope="module", params=["sorted", "ties shuffled"])
    def tie_order(request):
        with shuffled_ties(1) if request.param == "ties shuffled" else contextlib.nullcontext():
            yield request.param

    return tie_order
