"""Curve sources behind one interface: generated (`synthetic`) and recorded (`CurveBank`).

`EnvConfig.task_set` names one through `TASK_SETS`; `register_task_set` (or an entry point of
group ``coreenv.task_sets``) adds a name.
"""

from coreenv.curves.bank import (
    CurveBank,
    CurveProblem,
    concat_banks,
    curve_problem,
    load_bank,
    pad_curves,
    save_bank,
)
from coreenv.curves.bundled import (
    BUNDLED_BANK,
    NAMED_SPLITS,
    TEST_EVERY,
    bundled_bank,
    named_task_set,
)
from coreenv.curves.csv_logs import bank_from_arrays, bank_from_csv, bank_to_csv
from coreenv.curves.source import Curve, CurveSource
from coreenv.curves.synthetic import SyntheticCurves
from coreenv.curves.targets import demand_of, target_at_fraction
from coreenv.curves.task_sets import (
    ENTRY_POINT_GROUP,
    TASK_SETS,
    register_task_set,
    resolve_task_set,
)

__all__ = [
    "BUNDLED_BANK",
    "ENTRY_POINT_GROUP",
    "NAMED_SPLITS",
    "TASK_SETS",
    "TEST_EVERY",
    "Curve",
    "CurveBank",
    "CurveProblem",
    "CurveSource",
    "SyntheticCurves",
    "bank_from_arrays",
    "bank_from_csv",
    "bank_to_csv",
    "bundled_bank",
    "curve_problem",
    "demand_of",
    "load_bank",
    "named_task_set",
    "concat_banks",
    "pad_curves",
    "register_task_set",
    "resolve_task_set",
    "save_bank",
    "target_at_fraction",
]
