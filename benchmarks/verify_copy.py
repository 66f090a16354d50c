"""What the verify's own copy of the tree costs (verify/tree_copy.py): copy, hand over to the
verify's uid (as root), remove; against `cp -a` and `rm -rf` of the same tree in the same run.

Run: python benchmarks/verify_copy.py DIR [--rounds N]
e.g. on Django's sdist: pip download --no-binary :all: --no-deps django -d /tmp/dj, untar it, and
pass the unpacked directory. Prints each round and the medians; the ratio is ours / cp's.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewgate.verify.principal import VERIFY_UID_FIRST  # noqa: E402
from reviewgate.verify.tree_copy import copy_tree, hand_over, remove_tree  # noqa: E402


def _ours(tree: Path) -> float:
    root = Path(tempfile.mkdtemp(prefix="reviewgate-copy-bench-"))
    started = time.perf_counter()
    copy_tree(tree, root / "tree", ())
    if os.geteuid() == 0:
        hand_over(root, VERIFY_UID_FIRST)
    remove_tree(root)
    return time.perf_counter() - started


def _cp(tree: Path) -> float:
    root = Path(tempfile.mkdtemp(prefix="reviewgate-copy-bench-"))
    started = time.perf_counter()
    subprocess.run(["cp", "-a", str(tree), str(root / "tree")], check=True)
    subprocess.run(["rm", "-rf", str(root)], check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    if not options.tree.is_dir():
        parser.error(f"{options.tree}: not a directory")
    files = sum(len(names) for _, _, names in os.walk(options.tree))
    ours, theirs = [], []
    for index in range(options.rounds):  # alternating, so load on the machine falls on both
        ours.append(_ours(options.tree))
        theirs.append(_cp(options.tree))
        print(f"round {index + 1}: ours {ours[-1]:.2f} s, cp -a + rm -rf {theirs[-1]:.2f} s")
    mine, baseline = statistics.median(ours), statistics.median(theirs)
    print(f"{files} files: median ours {mine:.2f} s, cp -a + rm -rf {baseline:.2f} s, ratio {mine / baseline:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
