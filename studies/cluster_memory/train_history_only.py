"""MARA trained on estimates as good as on an unseen kind: the weigher reads the history alone.

The lab's `mara_history` recipe on ``fm_mara_learned`` with no reference runs (registered here
as ``fm_mara_learned_history_only``): a training task's analogs are only the tasks of its kind
the episode has finished, as for a kind no run was recorded of. On RL OOD and ViT OOD that
predictor and ``fm_mara_learned`` answer alike (the reference holds no run of those kinds).

    python studies/cluster_memory/train_history_only.py --minutes 30 \
        --work results/history_only/work --out results/history_only/mara.pt

Any other option is ``python -m coreenv_lab.commands.train_mara``'s (``pip install -e lab``).
Play the result reading ``fm_mara_learned`` (`play_retrained.py`), or in Python:
``MARA.pretrained(path=OUT, predictors={HISTORY_ONLY: make_predictor("fm_mara_learned")})``.
"""

from __future__ import annotations

import sys

from coreenv_lab.commands import train_mara
from coreenv_lab.predictors import WEIGHER, make_predictor, make_readable

HISTORY_ONLY = "fm_mara_learned_history_only"


def history_only(**sampler):
    """``fm_mara_learned`` without its reference runs (needs torch)."""
    from coreenv_lab.predictors.analog_weigher import AnalogWeigher
    from coreenv_lab.predictors.in_context import AnalogPredictor

    base = make_predictor("fm_mara_student", **sampler)
    return AnalogPredictor(base, None, weigher=AnalogWeigher.load(WEIGHER, base="fm_mara_student"))


def main(argv: list[str] | None = None) -> None:
    """Train the lab's ``mara_history`` recipe reading `history_only`."""
    make_readable(HISTORY_ONLY, history_only)
    argv = sys.argv[1:] if argv is None else argv
    asks_help = {"-h", "--help"} & set(argv)
    if not asks_help and not any(a == "--out" or a.startswith("--out=") for a in argv):
        sys.exit(
            "train_history_only.py: error: give --out (the default is the lab's mara_history.pt, "
            "which this run must not overwrite)"
        )
    train_mara.main(["--variant", "mara_history", "--predictor", HISTORY_ONLY, *argv])


if __name__ == "__main__":
    main()
