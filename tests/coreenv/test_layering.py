"""Layering: the environment package imports nothing above it (agents, curve recording, torch),
and what is above imports it only through its public faces."""

import ast
from pathlib import Path

import coreenv
from helpers import run_python

ABOVE = ("mara_agents", "curvegen", "torch")

IMPORT_EVERY_MODULE = f"""
import importlib, pkgutil, sys
import coreenv
names = [m.name for m in pkgutil.walk_packages(coreenv.__path__, "coreenv.")]
for name in names:
    importlib.import_module(name)
listed = sorted(coreenv.curves.TASK_SETS)  # reads entry points: must not import their packages
above = sorted(m for m in sys.modules if m.split(".")[0] in {ABOVE!r})
print(len(names), above)
"""


def test_importing_every_coreenv_module_imports_nothing_above_it():
    count, above = run_python(IMPORT_EVERY_MODULE).strip().split(" ", 1)
    assert int(count) > 20  # the walk reached the subpackages' modules
    assert above == "[]", f"coreenv imported {above}"


def imported_modules(path: Path):
    """Every module name a Python file imports (``from X import y`` gives X)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


def test_no_coreenv_module_names_a_package_above_it():
    root = Path(coreenv.__file__).parent
    for path in sorted(root.rglob("*.py")):
        for name in imported_modules(path):
            assert name.split(".")[0] not in ABOVE, f"{path.relative_to(root)} imports {name}"


PUBLIC_FACES = (
    "coreenv",
    "coreenv.checks",
    "coreenv.config",
    "coreenv.core",
    "coreenv.curves",
    "coreenv.layout",
    "coreenv.masks",
    "coreenv.predictor",
    "coreenv.wls",
)
"""Where code outside the environment imports it from: the top level (what a user of the
environment imports) and the modules of what code building on it needs (the config's rules, the
engine's face, how node actions are read, the predictor protocol, WLS)."""


def test_code_above_imports_coreenv_only_through_its_public_faces():
    repository = Path(__file__).parents[2]
    names = ("src/mara_agents", "src/curvegen", "lab", "benchmarks", "studies")
    folders = [repository / name for name in names]
    assert all(folder.is_dir() for folder in folders)
    for folder in [*folders, repository / "examples"]:
        for path in sorted(folder.rglob("*.py")):
            for name in imported_modules(path):
                if name.split(".")[0] == "coreenv":
                    assert name in PUBLIC_FACES, f"{path.relative_to(repository)} imports {name}"


BELOW_CORE = (
    "coreenv.checks",
    "coreenv.config",
    "coreenv.context",
    "coreenv.curves",
    "coreenv.episodes",
    "coreenv.errors",
    "coreenv.predictor",
)
"""What the simulator (`coreenv.core`) may import besides itself: the floors below it."""


def test_the_simulator_imports_nothing_above_it():
    core = Path(coreenv.__file__).parent / "core"
    for path in sorted(core.rglob("*.py")):
        for name in imported_modules(path):
            if name.split(".")[0] != "coreenv":
                continue
            below = name.startswith("coreenv.core") or name.startswith(BELOW_CORE)
            assert below, f"core/{path.relative_to(core)} imports {name}, above the simulator"


def test_episode_drawing_imports_nothing_of_the_simulator():
    episodes = Path(coreenv.__file__).parent / "episodes"
    for path in sorted(episodes.rglob("*.py")):
        for name in imported_modules(path):
            if name.split(".")[0] == "coreenv":
                below = name.startswith(("coreenv.episodes", *BELOW_CORE))
                assert below, f"episodes/{path.name} imports {name}, above the drawing of episodes"
