"""The curve corpus: many kinds of training recorded with validation and training losses.

The corpus is what loss predictors learn from and are judged on (docs/curves.md, "The curve
corpus"); the environment's bundled task sets are unchanged by it. `plan_corpus` lists the runs,
`coreenv_lab.corpus.store` records and assembles them (``benchmarks/make_corpus.py``).
"""

from coreenv_lab.corpus.families import (
    CORPUS_FAMILIES,
    KINDS,
    CorpusFamily,
    corpus_curves,
    plan_corpus,
    split_of,
)

__all__ = ["CORPUS_FAMILIES", "KINDS", "CorpusFamily", "corpus_curves", "plan_corpus", "split_of"]
