"""A real multi-file change for the shard/merge tests, and the builtin reviewer run in shards
in-process (what `run --shard` and `merge` do with its outcomes), for comparing with one run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding
from reviewgate.freeze.freeze import FrozenTarget, freeze, reader_for
from reviewgate.reviewers.base import ReviewerOutcome
from reviewgate.reviewers.builtin import BuiltinReviewer
from reviewgate.reviewers.builtin.fix_marker import is_marked_as_fix
from reviewgate.sharding.combine import combine_outcomes
from reviewgate.sharding.plan import ShardSpec, plan_shards
from reviewgate.verdict_stage import merge_findings
from reviewgate.verify.outcome import ABSENT

# Two new files share a 10-line function (DRY across files, in shard 1's whole-change work),
# one formats a value into SQL (blocking), one keeps commented-out code (not blocking), none comes
# with a test (the tests lens, whole-change), and the base holds a verify manifest.
_COPIED = '''

def summarize(rows):
    total = 0
    count = 0
    for row in rows:
        if row.get("skip"):
            continue
        total += row["amount"] * row.get("rate", 1)
        count += 1
    average = total / count if count else 0
    return {"total": total, "count": count, "average": average}
'''
BASE: dict[str, str] = {
    "app/__init__.py": "",
    "app/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "from app.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    ".prepcook/scripts.toml": '[test]\nrun = "true"\n',
}
CHANGE: dict[str, str] = {
    "app/io.py": "def load(cursor, request):\n    cursor.execute(f\"SELECT body FROM files WHERE path = '{request.args['path']}'\")\n",
    "app/report.py": "import json\n" + _COPIED,
    "app/export.py": "import csv\n" + _COPIED,
    "app/notes.py": "def note():\n    return 1\n\n# def old():\n#     x = 1\n#     y = 2\n#     return x + y\n#     print(x)\n",
    "app/run.py": "import subprocess\n\n\ndef run(command):\n    return subprocess.call(command)\n",
    "app/core.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
}


def builtin_request(repo: Path, target: FrozenTarget, sections: Mapping[str, Mapping[str, Any]] | None = None,
                    shard: ShardSpec | None = None) -> ReviewRequest:
    return ReviewRequest(
        target=target, head=reader_for(target), verify=ABSENT, sections=sections or {},
        marked_as_fix=is_marked_as_fix(repo, target.head_sha),
        scope=plan_shards(target, shard.total).scope(shard) if shard is not None else None,
    )


def one_run_findings(repo: Path, sections: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[Finding, ...]:
    target = freeze(repo, base="main")
    outcome = BuiltinReviewer().review(builtin_request(repo, target, sections))
    return merge_findings((outcome,), ABSENT)


def sharded_findings(repo: Path, total: int,
                     sections: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[Finding, ...]:
    """Each shard's builtin outcome, combined as `merge` combines them."""
    target = freeze(repo, base="main")
    parts: list[tuple[ShardSpec, ReviewerOutcome]] = []
    for index in range(1, total + 1):
        shard = ShardSpec(index, total)
        parts.append((shard, BuiltinReviewer().review(builtin_request(repo, target, sections, shard))))
    return merge_findings((combine_outcomes("builtin", parts),), ABSENT)
