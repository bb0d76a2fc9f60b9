"""Old import paths still work until 0.3.0, each with a DeprecationWarning naming the new path."""

import importlib
import sys

import pytest

from mara_agents import compat


@pytest.mark.parametrize("old, new", sorted(compat.MOVED_MODULES.items()))
def test_old_module_path_warns_and_is_the_new_module(old, new):
    if old in sys.modules:  # imported by an earlier test: import afresh to see the warning
        del sys.modules[old]
    with pytest.warns(DeprecationWarning, match=rf"{old} .*removed in 0\.3\.0; use {new} "):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_from_old_path_import_name():
    sys.modules.pop("mara_agents.predictors.queries", None)
    with pytest.warns(DeprecationWarning, match="mara_agents.predictor_eval.queries"):
        from mara_agents.predictors.queries import QueryConfig
    from mara_agents.predictor_eval.queries import QueryConfig as new

    assert QueryConfig is new


@pytest.mark.parametrize("package, name", sorted(compat.MOVED_NAMES))
def test_old_package_name_warns_and_is_the_new_object(package, name):
    new = compat.MOVED_NAMES[(package, name)]
    with pytest.warns(DeprecationWarning, match=rf"use {new}\.{name} instead"):
        value = getattr(importlib.import_module(package), name)
    assert value is getattr(importlib.import_module(new), name)


def test_unknown_name_is_still_an_attribute_error():
    import mara_agents.predictors

    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        mara_agents.predictors.Nothing  # noqa: B018


@pytest.mark.parametrize("name", ["fit_calibration", "OutOfFamily", "REACH_EDGES"])
def test_the_calibrations_fit_names_warn_and_come_from_calibration_fit(name):
    import mara_agents.fm_training.calibration_fit as new
    import mara_agents.predictors.calibration as old

    with pytest.warns(DeprecationWarning, match=f"calibration_fit.{name} instead"):
        assert getattr(old, name) is getattr(new, name)
    with pytest.raises(AttributeError):
        old.Nothing  # noqa: B018
