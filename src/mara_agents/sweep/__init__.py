"""The load sweep (design §5) as a library: a `SweepConfig` in, result rows and reports out.

    config = SweepConfig(methods=("fifo", "lara", MyScheduler()), episodes=10, env={"num_nodes": 8})
    rows = run_sweep(config)  # in memory; give ``out`` to write rows.jsonl and resume
    print(report(rows, config))

`coreenv sweep` and `coreenv stress` (`mara_agents.cli`) are thin command lines over it. Modules: `methods` (names and validation), `jobs` (one episode),
`fingerprint` (what produced a row), `config` (`SweepConfig`), `runners` (plan, local and Ray
runners, resume), `progress` (the bar), `report` (tables, CSV, plot), `stress`.
"""

from mara_agents.sweep.config import BACKENDS, QUICK_EPISODES, REFERENCE_LOADS, SweepConfig
from mara_agents.sweep.fingerprint import job_fingerprint, method_fingerprint
from mara_agents.sweep.jobs import (
    EVAL_SEED_BASE,
    Job,
    env_config,
    episode_seed,
    row_key,
    run_job,
    run_jobs_together,
)
from mara_agents.sweep.methods import (
    DEFAULT_METHODS,
    METHODS,
    SweepInputError,
    load_checkpoint,
    make_scheduler,
    playable,
    validate,
)
from mara_agents.sweep.progress import Progress
from mara_agents.sweep.report import report, write_reports
from mara_agents.sweep.runners import (
    BATCH_LANES,
    plan,
    read_rows,
    run_jobs,
    run_sweep,
    work_units,
)
from mara_agents.sweep.stress import stress_table

__all__ = [
    "BACKENDS",
    "BATCH_LANES",
    "DEFAULT_METHODS",
    "EVAL_SEED_BASE",
    "METHODS",
    "QUICK_EPISODES",
    "REFERENCE_LOADS",
    "Job",
    "Progress",
    "SweepConfig",
    "SweepInputError",
    "env_config",
    "episode_seed",
    "job_fingerprint",
    "load_checkpoint",
    "make_scheduler",
    "method_fingerprint",
    "plan",
    "playable",
    "read_rows",
    "report",
    "row_key",
    "run_job",
    "run_jobs",
    "run_jobs_together",
    "run_sweep",
    "stress_table",
    "validate",
    "work_units",
    "write_reports",
]
