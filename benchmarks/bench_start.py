"""Start-up costs of coreenv: import, first episode with numba's cache empty and warm, install size.

Each figure is the median wall time of ``--repeats`` fresh Python processes, with the time of a
bare interpreter start (``python -c pass``) and of ``import gymnasium, pettingzoo`` (what any
PettingZoo environment pays) measured in the same run as references:

* ``import coreenv``;
* import, then one `CoreEnv` episode's first step, numba's cache empty (a folder made for the run:
  every compiled rule compiles) and then warm (the same folder, filled by the cold run).

The installed size of numba and llvmlite (what the engine adds) is read from their folders.

    python benchmarks/bench_start.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIRST_STEP = "import coreenv; env = coreenv.CoreEnv(); env.reset(seed=0); env.step({})"
PROGRAMS = {
    "python -c pass": "pass",
    "import gymnasium, pettingzoo": "import gymnasium, pettingzoo",
    "import coreenv": "import coreenv",
}


def seconds(program: str, environ: dict[str, str]) -> float:
    """Wall time of one fresh process running ``program``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", program], env=environ, check=True)
    return time.perf_counter() - start


def installed_megabytes(module: str) -> float:
    """Size on disk of an installed package's folder, in MB."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    folder = Path(spec.origin).parent
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def measure(repeats: int) -> dict[str, float]:
    """Median seconds of each figure; a cache folder of its own for the first-step runs."""
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    times: dict[str, list[float]] = {name: [] for name in PROGRAMS}
    times |= {"first step, cache empty": [], "first step, cache warm": []}
    for _ in range(repeats):
        for name, program in PROGRAMS.items():
            times[name].append(seconds(program, environ))
        with tempfile.TemporaryDirectory() as cache:
            cached = {**environ, "NUMBA_CACHE_DIR": cache}
            times["first step, cache empty"].append(seconds(FIRST_STEP, cached))
            times["first step, cache warm"].append(seconds(FIRST_STEP, cached))
    return {name: statistics.median(values) for name, values in times.items()}


def report(medians: dict[str, float]) -> str:
    reference = medians["import gymnasium, pettingzoo"]
    lines = [
        f"{name + ':':34s} {value:6.2f} s   {value / reference:5.2f} x gymnasium + pettingzoo"
        for name, value in medians.items()
    ]
    sizes = {module: installed_megabytes(module) for module in ("numba", "llvmlite")}
    lines.append("installed: " + ", ".join(f"{m} {mb:.0f} MB" for m, mb in sizes.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_start.py", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="processes per figure (>= 1)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"argument --repeats: must be an int >= 1, got {args.repeats}")
    print(report(measure(args.repeats)))


if __name__ == "__main__":
    main()
