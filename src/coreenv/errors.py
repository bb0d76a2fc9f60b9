"""Exceptions raised on bad input, so callers can catch the environment's own errors."""

from __future__ import annotations

__all__ = ["BankError", "ConfigError", "InvalidActionError", "NoPredictorError"]


class ConfigError(ValueError, TypeError):
    """An `EnvConfig` field (or override) has a bad value or type.

    It is both a `ValueError` and a `TypeError` so that callers catching either find it.
    """


class BankError(ValueError):
    """A curve bank is malformed (missing keys, shapes that disagree, bad losses)."""


class InvalidActionError(ValueError):
    """A node chose an empty slot or a slot another node took, under ``invalid_action="raise"``."""


class NoPredictorError(RuntimeError):
    """Estimates were read from an environment that has no predictor attached."""

    @classmethod
    def reading(cls, what: str) -> NoPredictorError:
        """The error for reading the estimates of ``what``, saying what to do about it."""
        return cls(
            f"no predictor attached to {what}, so there are no estimates to read: create the "
            "environment with a predictor (CoreEnv(predictor=...)), or declare "
            "observation_predictor on your scheduler so that evaluate() and the sweep attach one "
            "(docs/schedulers.md)."
        )
