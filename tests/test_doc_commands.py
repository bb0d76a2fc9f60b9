"""Every command the manual shows runs: README.md and docs/*.md, at a tiny budget.

A command is a line of a ```bash / ```sh / ```console block, or a `coreenv ...`,
`python -m mara_agents ...`, `python benchmarks/...` or `python studies/...` span in backticks of
the prose or a table; it is named by its page and its text. A page's commands run in page order,
as a reader's shell session would, in one folder per page that mirrors a checkout (`page_folder`):
what one command writes, a later one reads, and ``cd`` moves the commands after it.
Each runs in-process: ``coreenv ARGS`` and ``python -m mara_agents ARGS`` as
``mara_agents.cli.main(ARGS)``, ``python SCRIPT.py ARGS`` as ``runpy.run_path`` with that argv.
It passes when it exits with status 0 and leaves the repository's files as they were.

The rules, applied to every command alike:

* Shell: a ``for V in ... Z; do ... done`` loop runs its body once, with V = Z (its last
  value); a brace list ``x_{1,2,3}`` names its last item, to match; ``$V`` and ``$((...))``
  are expanded; ``taskset -c N`` is dropped.
* Budget (`TINY`): the options that size a command's work are set to tiny values, whether the
  page gives them or leaves their defaults: episodes, seeds' loops, training steps, demonstration
  episodes, DAgger rounds and minutes, evaluation episodes, worker processes (1: in-process).
  ``--quick`` becomes ``--episodes 1``. Options that choose what runs (methods, task sets,
  variants, nodes, clusters) stay as written. A command named without options, or with one
  option and no value (`coreenv sweep`, `coreenv eval-predictors --queries`), runs with
  ``--help``.
* Unwritten options (`UNWRITTEN`): a sweep's grid left at its default runs one point (id,
  p = 0.04); a MARA training left on its six clusters trains on two small ones; a command whose
  default output is a file the package ships (the bank, the corpus, the FM) is given ``--out``
  in the page's folder. Relative paths (a training run's ``--work``
  included) stay in the page's folder.
* Placeholders a reader fills in (`PLACEHOLDERS`, `provide_files`): ``M`` = 8 nodes, ``S`` = the
  rl_ood task set, ``p`` = 0.04, ``NAME`` = mara, ``COMMAND`` = ``--help``; a scheduler
  ``pkg.module:Class`` of one's own, or ``pkg.module:Class(key=value, ...)``, is the tutorial's
  (examples/my_scheduler.py), taking and ignoring any keyword arguments; ``my_*.csv`` a small
  CSV of training logs; ``OLD/`` and ``NEW/`` hold a tiny sweep's rows.
* Protocol (`SMALL_BENCH`): ``coreenv benchmark`` plays one cell of CoRE-Bench-v1 (one episode,
  the stress test's one), against the shipped references of that cell.
* Not run (`EXCLUDED`, by pattern): installation, the test suite itself, ``mkdocs``, ``git``,
  commands with elided arguments (``<...>``, ``...``), a Ray cluster's address, the making of
  the benchmark's shipped references.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import traceback
from pathlib import Path
from typing import NamedTuple

import pytest

from mara_agents import cli
from mara_agents.benchmark.protocol import CORE_BENCH_V1
from mara_agents.cli import benchmark as benchmark_command

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^([ \t]*)```([\w-]*)[^\n]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
SHELL = {"bash", "sh", "console", "shell"}
INLINE = re.compile(
    r"`((?:coreenv|python -m mara_agents)\s[^`]*|python (?:benchmarks|studies)/[^`]*)`"
)
LOOP = re.compile(r"^for (\w+) in [^;]*?(\S+); do$")

TINY = {
    "coreenv sweep": {"--episodes": "1", "--workers": "1", "--quick": None},
    "benchmarks/sweep_load.py": {"--episodes": "1", "--workers": "1", "--quick": None},
    "coreenv stress": {"--episodes": "1"},
    "benchmarks/stress_infeasible.py": {"--episodes": "1"},
    "coreenv eval-predictors": {"--per-curve": "1"},
    "coreenv train-mara": {
        "--minutes": "0.01",
        "--demo-episodes": "1",
        "--dagger-rounds": "0",
        "--eval-every": "1",
        "--eval-episodes": "2",
    },
    "coreenv train-baseline": {
        "--minutes": "1",
        "--max-steps": "64",
        "--eval-every": "64",
        "--eval-episodes": "2",
    },
    "coreenv compare": {"--episodes": "2"},
    "coreenv benchmark": {"--workers": "1"},
    "benchmarks/make_curve_bank.py": {"--runs-per-family": "1", "--batches": "8", "--workers": "1"},
    "benchmarks/make_corpus.py": {"--runs-per-family": "1", "--batches": "8", "--workers": "1"},
    "benchmarks/describe_task_sets.py": {"--episodes": "1", "--tasks": "50"},
    "benchmarks/bench_env.py": {
        "--steps": "300",
        "--repeats": "1",
        "--lanes": "4",
        "--batched-steps": "20",
        "--warmup": "5",
        "--event-lanes": "3",
        "--sequential-lanes": "4",
        "--choices": "200",
    },
    "benchmarks/bench_start.py": {"--repeats": "1"},
    "benchmarks/bench_latency.py": {"--episodes": "1", "--repeats": "1"},
    "benchmarks/bench_training.py": {
        "--updates": "1",
        "--n-steps": "1",
        "--held-episodes": "2",
        "--cartpole-steps": "1000",
        "--to-lara": None,  # a study's run, checked only at its evaluations: not a tiny one
        "--eval-episodes": "2",
    },
    "benchmarks/bench_vector.py": {"--envs": "2", "--n-steps": "16", "--steps": "64"},
    "benchmarks/train_fm.py": {"--steps": "2", "--runs": "8", "--batch": "32", "--every": "2"},
    "studies/tuning/calibrate_regime.py": {"--episodes": "1", "--workers": "1"},
    "studies/tuning/tune_lara.py": {"--episodes": "1", "--per-curve": "1", "--workers": "1"},
}
"""Budget options by command: each is set to its value, added where missing; None drops the
option."""

FORMS: dict[str, tuple[str, str]] = {}
"""The option that picks a command's form, and its default (a form's budget is
``TINY[f"{command} {form}"]``); no command of 0.3.0 has forms."""

GRID = {"--task-sets": "id", "--arrival-prob": "0.04"}
UNWRITTEN: dict[str, dict[str, str | list[str]]] = {
    "coreenv sweep": GRID,
    "benchmarks/sweep_load.py": GRID,
    "benchmarks/make_curve_bank.py": {"--out": "bank.npz"},
    "benchmarks/make_corpus.py": {"--out": "corpus.npz"},
    "benchmarks/train_fm.py": {"--out": "fm.pt"},
    "coreenv train-mara": {"--clusters": ["2/4 equal", "4/8 mixed_costly"]},
}
"""Options added only where the command does not give them: a sweep's grid left at its default
runs one point; a default --out that is a file the package ships goes to the page's folder; a
MARA training left on its six clusters trains on two small ones, one of mixed speeds and costly
moves."""

SMALL_BENCH = dataclasses.replace(
    CORE_BENCH_V1,
    clusters={"4/8 equal": CORE_BENCH_V1.clusters["4/8 equal"]},
    task_sets=("id",),
    loads=CORE_BENCH_V1.loads[:1],
    episodes=1,
    quick_episodes=1,
    stress_episodes=1,
)
"""What ``coreenv benchmark`` plays here: one cell of CoRE-Bench-v1, under its name, so the shipped
references place it."""

PLACEHOLDERS = {"M": "8", "S": "rl_ood", "p": "0.04", "NAME": "mara", "COMMAND": "--help"}

EXCLUDED = {
    r"^pip install": "installs packages",
    r"^python -m pytest": "runs the test suite, which holds this test",
    r"^(mkdocs|git) ": "a documentation server or a checkout, not a command of the package",
    r"<[^>]*>|\.\.\.": "elided arguments: a sketch of a command, not one",
    r"--ray-address": "attaches to a running Ray cluster",
    r"benchmarks/make_references\.py": "plays the whole protocol for every built-in method (about "
    "an hour) and rewrites the shipped references",
}
"""Commands not run, by pattern of their text, and why."""


class Command(NamedTuple):
    page: str
    text: str  # as the page writes it, whitespace collapsed
    folder: str  # where ``cd`` left the reader, relative to the page's folder
    variables: dict[str, str]  # the loop variables the command sees


def shell_lines(block: str) -> list[str]:
    """The block's logical lines: continuations joined, blank lines dropped."""
    joined = re.sub(r"\\\n", " ", block)
    return [line.strip() for line in joined.splitlines() if line.strip()]


def block_commands(page: str, block: str, folder: str) -> tuple[list[Command], str]:
    """The commands of one shell block, and the folder the reader is in after it."""
    found, variables = [], {}
    for line in shell_lines(block):
        code = line.split(" #")[0].strip()
        if loop := LOOP.match(code):
            variables = {loop.group(1): loop.group(2)}
        elif code == "done":
            variables = {}
        elif code.startswith("cd "):
            folder = str(Path(folder, code[3:].strip()))
        elif not code.startswith("#"):
            found.append(Command(page, " ".join(code.split()), folder, variables))
    return found, folder


def collect(page: str, text: str) -> list[Command]:
    """The page's commands in page order, each once."""
    found, folder, start = [], ".", 0
    for fence in [*FENCE.finditer(text), None]:
        prose = text[start : fence.start() if fence else len(text)]
        spans = [" ".join(m.group(1).split()) for m in INLINE.finditer(prose)]
        found += [Command(page, span, folder, {}) for span in spans]
        if fence is None:
            break
        if fence.group(2) in SHELL:
            commands, folder = block_commands(page, fence.group(3), folder)
            found += commands
        start = fence.end()
    unique = {command.text: command for command in reversed(found)}
    return sorted(unique.values(), key=found.index)


ALL = [command for page in PAGES for command in collect(page, (ROOT / page).read_text())]


def exclusion(text: str) -> str | None:
    return next((why for pattern, why in EXCLUDED.items() if re.search(pattern, text)), None)


def words(command: Command) -> list[str]:
    """The command's argv after the shell and placeholder rules."""
    numbers = {name: int(value) for name, value in command.variables.items() if value.isdigit()}
    text = re.sub(r"\$\(\((.*?)\)\)", lambda m: str(eval(m.group(1), {}, numbers)), command.text)
    for name, value in command.variables.items():
        text = text.replace(f"${name}", value)
    text = re.sub(r"\{[^{}]*,([^,{}]*)\}", r"\1", text)
    argv = [PLACEHOLDERS.get(word, word) for word in shlex.split(text, comments=True)]
    return argv[3:] if argv[:2] == ["taskset", "-c"] else argv


def program(argv: list[str]) -> tuple[str, list[str]]:
    """The command's key in `TINY` and its arguments."""
    if argv[:3] == ["python", "-m", "mara_agents"]:
        argv = ["coreenv", *argv[3:]]
    if argv[0] == "coreenv" and argv[1:2] and not argv[1].startswith("-"):
        return f"coreenv {argv[1]}", argv[2:]
    if argv[0] == "python" and argv[1].endswith(".py"):
        return argv[1], argv[2:]
    return argv[0], argv[1:]


def set_option(args: list[str], option: str, value: str | None) -> list[str]:
    """``args`` with ``option`` and its values removed, then ``option value`` appended."""
    kept, skipping = [], False
    for arg in args:
        skipping = arg == option or (skipping and not arg.startswith("--"))
        if not skipping:
            kept.append(arg)
    return kept if value is None else [*kept, option, value]


def tiny(key: str, args: list[str]) -> list[str]:
    """The arguments at the tiny budget (`TINY`, `UNWRITTEN`); a name alone: ``--help``."""
    if not args or (len(args) == 1 and args[0].startswith("--")):
        return ["--help"]
    option, default = FORMS.get(key, (None, None))
    form = args[args.index(option) + 1] if option in args else default
    for rule in (TINY.get(key, {}), TINY.get(f"{key} {form}", {})):
        for name, value in rule.items():
            args = set_option(args, name, value)
    for name, value in UNWRITTEN.get(key, {}).items():
        values = [value] if isinstance(value, str) else value
        args = args if name in args or "--help" in args else [*args, name, *values]
    return args


def write_logs(path: Path) -> None:
    """A reader's CSV of training logs: three runs of 60 batches."""
    rows = [f"r{r},{b},{2 / (1 + b) ** (0.3 + r / 10):.6f}" for r in range(3) for b in range(60)]
    path.write_text("\n".join(["run,batch,loss", *rows]) + "\n")


SCHEDULER = re.compile(r"([a-z_][\w.]*):([A-Z]\w*)(?:\(.*\))?", re.S)
"""``pkg.module:Class``, with keyword arguments or not: the module and the class."""


def module_file(folder: Path, method: str) -> Path:
    """Where the sweep finds ``pkg.module:Class`` from ``folder``."""
    return folder.joinpath(*method.split(":")[0].split(".")).with_suffix(".py")


def defines(folder: Path, method: str) -> bool:
    """Whether ``folder`` already holds the module of ``method`` with its class."""
    path, name = module_file(folder, method), SCHEDULER.fullmatch(method).group(2)
    return path.exists() and re.search(rf"^(class {name}\b|{name} =)", path.read_text(), re.M)


def write_scheduler(folder: Path, method: str) -> None:
    """``pkg.module:Class``, a reader's scheduler: the tutorial's under that name (its label too),
    which takes and ignores any keyword arguments (added to the module if it exists)."""
    path, name = module_file(folder, method), SCHEDULER.fullmatch(method).group(2)
    for package in path.relative_to(folder).parents[:-1]:
        (folder / package / "__init__.py").parent.mkdir(parents=True, exist_ok=True)
        (folder / package / "__init__.py").touch()
    if not path.exists():
        path.write_text((ROOT / "examples" / "my_scheduler.py").read_text())
    stand_in = f"\n\nclass {name}(ShortestHopeful):\n    name = {name!r}\n\n"
    stand_in += "    def __init__(self, **kwargs):\n        super().__init__()\n"
    path.write_text(path.read_text() + stand_in)


def write_rows(folder: Path) -> None:
    """A run's folder with its rows.jsonl: one episode of FIFO on synthetic curves."""
    argv = ["sweep", "--methods", "fifo", "--task-sets", "synthetic", "--arrival-prob", "0.04"]
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main([*argv, "--episodes", "1", "--workers", "1", "--out", str(folder)])


def provide_files(folder: Path, args: list[str]) -> None:
    """Write what the command's placeholder files stand for, where the folder lacks them."""
    for arg in args:
        if (folder / arg).exists():
            continue
        if re.fullmatch(r"my_\w+\.csv", arg):
            write_logs(folder / arg)
        elif SCHEDULER.fullmatch(arg) and not defines(folder, arg):
            write_scheduler(folder, arg)
        elif re.fullmatch(r"(OLD|NEW)/rows\.jsonl", arg):
            write_rows(folder / arg.split("/")[0])


@pytest.fixture(scope="module")
def page_folders(tmp_path_factory) -> dict[str, Path]:
    """One folder per page, made on first use."""
    return {}


def page_folder(folders: dict[str, Path], factory, page: str) -> Path:
    """The page's folder, a checkout's layout: src/, benchmarks/, studies/ linked (read),
    examples/ copied (a reader runs there), docs/'s folders empty (figures are written there)."""
    if page not in folders:
        folder = factory.mktemp(page.replace("/", "_"))
        for name in ("src", "benchmarks", "studies"):
            (folder / name).symlink_to(ROOT / name)
        shutil.copytree(ROOT / "examples", folder / "examples")
        for sub in (ROOT / "docs").iterdir():
            if sub.is_dir():
                (folder / "docs" / sub.name).mkdir(parents=True)
        folders[page] = folder
    return folders[page]


def repository_state() -> str:
    """The repository's changed and untracked files (caches aside)."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    caches = ("__pycache__", ".pytest_cache")
    return "\n".join(line for line in status.splitlines() if not any(c in line for c in caches))


def run(key: str, args: list[str]) -> tuple[object, str]:
    """Run the command in-process; its exit status (0, a SystemExit code or the exception's
    traceback) and its output."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        try:
            if key.startswith("coreenv"):
                cli.main([*key.split()[1:], *args])
            else:
                sys.argv = [key, *args]
                sys.path.insert(0, str(Path(key).resolve().parent))
                runpy.run_path(key, run_name="__main__")
            status = 0
        except SystemExit as e:
            status = e.code or 0
        except Exception:  # noqa: BLE001  the failure to report
            status = traceback.format_exc(limit=-3)
    return status, printed.getvalue()


def test_every_page_has_its_commands_found():
    counts = {page: sum(c.page == page for c in ALL) for page in PAGES}
    assert counts["README.md"] and counts["docs/benchmark.md"], counts


@pytest.mark.parametrize("command", ALL, ids=[f"{c.page}: {c.text}" for c in ALL])
def test_documented_command_runs(command, page_folders, tmp_path_factory, monkeypatch, registry):
    if why := exclusion(command.text):
        pytest.skip(why)
    key, args = program(words(command))
    assert key in TINY or key.startswith("coreenv") or key.endswith(".py"), f"no rule runs {key!r}"
    folder = page_folder(page_folders, tmp_path_factory, command.page) / command.folder
    monkeypatch.chdir(folder)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    if key == "coreenv benchmark":
        monkeypatch.setattr(benchmark_command, "CORE_BENCH_V1", SMALL_BENCH)
    args = tiny(key, args)
    provide_files(folder, args)
    before = repository_state()
    status, output = run(key, args)
    tail = "\n".join(output.splitlines()[-15:])
    assert status == 0, f"{key} {shlex.join(args)}\nexit status {status}\n{tail}"
    assert repository_state() == before, f"{key} {shlex.join(args)} wrote into the repository"


PAGE = """Run `coreenv sweep --episodes 40` or `python benchmarks/bench_env.py`; `coreenv` is the
package, `coreenv.env()` a function.

| job | command |
|---|---|
| stress | `coreenv stress --episodes 10` |

```bash
pip install -e .
cd examples
for seed in 1 2 3; do
  coreenv train-baseline --seed $seed --env-seed $((10 * seed)) \\
      --work runs/seed_$seed      # a comment
done
coreenv sweep --out runs/seed_{1,2,3}
```

```python
print("coreenv sweep")
```
"""


def test_the_collector_reads_blocks_prose_and_tables_in_page_order():
    found = collect("page.md", PAGE)
    assert [c.text for c in found] == [
        "coreenv sweep --episodes 40",
        "python benchmarks/bench_env.py",
        "coreenv stress --episodes 10",
        "pip install -e .",
        "coreenv train-baseline --seed $seed --env-seed $((10 * seed)) --work runs/seed_$seed",
        "coreenv sweep --out runs/seed_{1,2,3}",
    ]
    assert [c.folder for c in found] == [".", ".", ".", ".", "examples", "examples"]
    assert exclusion(found[3].text) == "installs packages"
    assert words(found[4])[2:] == ["--seed", "3", "--env-seed", "30", "--work", "runs/seed_3"]
    assert words(found[5])[-1] == "runs/seed_3"


def test_the_budget_rule_shrinks_counts_and_keeps_choices():
    key, args = program(["python", "-m", "mara_agents", "sweep", "--quick", "--methods", "fifo"])
    assert key == "coreenv sweep"
    assert tiny(key, args) == [
        *["--methods", "fifo", "--episodes", "1", "--workers", "1"],
        *["--task-sets", "id", "--arrival-prob", "0.04"],
    ]
    assert tiny("coreenv train-mara", ["--clusters", "8/16", "--minutes", "60"]) == [
        *["--clusters", "8/16", "--minutes", "0.01", "--demo-episodes", "1"],
        *["--dagger-rounds", "0", "--eval-every", "1", "--eval-episodes", "2"],
    ]
    assert tiny("coreenv sweep", []) == tiny("coreenv eval-predictors", ["--queries"]) == ["--help"]


def test_a_broken_command_fails_with_its_status_and_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, output = run("coreenv sweep", ["--methods", "magic", "--episodes", "1"])
    assert status == 2 and "unknown method 'magic'" in output
