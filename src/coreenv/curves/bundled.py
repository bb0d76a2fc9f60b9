"""The bundled bank of recorded curves and the named task sets cut from it.

The bank (``coreenv/data/curves.npz``, recorded by ``benchmarks/make_curve_bank.py``) holds every
run with a split label; a named task set is the runs of one split:

==========  ==========  ==========================================================
name        split       runs
==========  ==========  ==========================================================
id          id_test     in-distribution runs held out for testing (every 4th run)
id_train    id_train    the other in-distribution runs: for training predictors and
                        schedulers
rl_ood      rl_ood      reinforcement-learning runs (out of distribution)
vit_ood     vit_ood     vision-transformer runs (out of distribution)
==========  ==========  ==========================================================
"""

from __future__ import annotations

import functools
from pathlib import Path

from coreenv.curves.bank import CurveBank, load_bank
from coreenv.errors import BankError

__all__ = ["BUNDLED_BANK", "NAMED_SPLITS", "TEST_EVERY", "bundled_bank", "named_task_set"]

BUNDLED_BANK = Path(__file__).resolve().parent.parent / "data" / "curves.npz"
TEST_EVERY = 4  # ID run i is a test run when i % TEST_EVERY == 0: the split is by run
NAMED_SPLITS = {"id": "id_test", "id_train": "id_train", "rl_ood": "rl_ood", "vit_ood": "vit_ood"}


@functools.cache
def bundled_bank() -> CurveBank:
    """The whole bundled bank (loaded once per process)."""
    if not BUNDLED_BANK.is_file():
        raise BankError(
            f"the bundled curve bank is missing at {BUNDLED_BANK}; record it with "
            "`python benchmarks/make_curve_bank.py`."
        )
    return load_bank(BUNDLED_BANK)


@functools.cache
def named_task_set(name: str) -> CurveBank:
    """The runs of one named task set (see the module table)."""
    bank = bundled_bank()
    return bank.subset(bank.split == NAMED_SPLITS[name], name=name)
