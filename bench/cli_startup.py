"""Start-up cost of the command line: ``webreach --help`` as a whole process.

Printed beside a bare ``python -c pass`` so the interpreter's own share is visible.

    python bench/cli_startup.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def median_wall(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    script = shutil.which("webreach")
    webreach = [script] if script else [sys.executable, "-m", "webreach"]
    bare = median_wall([sys.executable, "-c", "pass"], args.repeat)
    helped = median_wall([*webreach, "--help"], args.repeat)
    search_help = median_wall([*webreach, "search", "--help"], args.repeat)
    print(f"python -c pass          {bare * 1000:6.0f} ms")
    print(f"webreach --help         {helped * 1000:6.0f} ms  ({helped / bare:.1f}x bare python)")
    print(f"webreach search --help  {search_help * 1000:6.0f} ms")
    verdict = "meets" if helped < 0.3 else "MISSES"
    print(f"median {helped * 1000:.0f} ms: {verdict} the 300 ms target")


if __name__ == "__main__":
    main()
