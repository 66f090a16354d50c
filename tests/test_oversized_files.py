"""A file over the per-file size cap is kept from the model reviewers and the structural lenses,
but never from the cheap ones: its secrets, security patterns and swallowed failures are found,
and when no reviewer that can read it ran, the review is blocked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.oversized import WHOLE_FILE_LIMIT, added_line_pieces
from reviewgate.target.diff import parse_hunks
from reviewgate.target.exclusions import MAX_FILE_DIFF_BYTES
from testing.cli import run_cli
from testing.model_server import review_document
from testing.repo import make_repo

pytestmark = pytest.mark.timeout(120)

BASE = {"README.md": "# app\n", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}
# A made-up token in GitHub's format, assembled so no scanner takes this file for a leak.
TOKEN = "gh" + "p_" + "0versized" * 4 + "Tk"
FILLER = "def helper_{n}(value):\n    return value + {n}\n\n\n"


def filler(first: int, size: int) -> str:
    parts, total, number = [], 0, first
    while total < size:
        parts.append(FILLER.format(n=number))
        total += len(parts[-1])
        number += 1
    return "".join(parts)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def big_app() -> str:
    """565 KB of harmless code with four problems in its middle and at its end."""
    middle = (
        "import os\n\n\n"
        "def run(expression, name):\n"
        "    try:\n"
        "        os.system(f\"convert {name}\")\n"
        "        return eval(expression)\n"
        "    except Exception:\n"
        "        pass\n\n\n"
    )
    return filler(0, 300_000) + middle + filler(100_000, 265_000) + f'API = "{TOKEN}"\n'


def findings_by_rule(report: dict[str, object]) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = {}
    for item in report["findings"]:  # type: ignore[attr-defined]
        found.setdefault(item["rule"], []).append((item["path"], item["line"]))
    return found


def test_a_565_kb_file_with_four_problems_is_not_approved(tmp_path: Path) -> None:
    text = big_app()
    assert MAX_FILE_DIFF_BYTES < len(text) < WHOLE_FILE_LIMIT
    repo = make_repo(tmp_path, BASE, {"app.py": text, "tests/test_app.py": "def test_app():\n    pass\n"})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    found = findings_by_rule(report)
    assert found["security/committed-secret"] == [("app.py", line_of(text, TOKEN))]
    assert ("app.py", line_of(text, "eval(")) in found["security/eval"]
    assert ("app.py", line_of(text, "os.system")) in found["security/shell-injection"]
    assert ("app.py", line_of(text, "except Exception")) in found["correctness/swallowed-exception"]
    [excluded] = report["target"]["excluded"]
    assert excluded["path"] == "app.py" and "only the builtin line lenses read it" in excluded["reason"]
    assert TOKEN not in json.dumps(report) and TOKEN not in result.stdout


def test_a_file_of_megabytes_is_scanned_line_by_line_to_its_end(tmp_path: Path) -> None:
    text = "".join(f"const value{n} = {n};\n" for n in range(120_000)) + f'const key = "{TOKEN}";\n'
    text += "".join(f"const after{n} = {n};\n" for n in range(5_000))
    assert len(text) > 2 * WHOLE_FILE_LIMIT
    repo = make_repo(tmp_path, BASE, {"web/data.js": text})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 1, result.stdout + result.stderr
    found = findings_by_rule(result.report())
    assert found["security/committed-secret"] == [("web/data.js", line_of(text, TOKEN))]


def test_a_file_only_the_builtin_reviewer_can_read_blocks_a_model_only_review(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(review_document())!r})\n", encoding="utf-8")
    config = (
        '[review]\nreviewers = ["agent"]\n\n[reviewer.agent]\nprovider = "command"\n'
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]\ntimeout = 10\n\n"
        "[cache]\nenabled = false\n"
    )
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config},
                     {"app.py": big_app(), "notes.txt": "small and reviewed\n"})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 3, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "blocked"
    assert any(reason.startswith("app.py: over the per-file size cap") for reason in report["reasons"])


def test_pieces_hold_every_added_line_with_its_number_and_nothing_else() -> None:
    raw = (
        b"@@ -1,3 +1,4 @@ def f():\n context\n-old\n+new one\n+new two\n context\n"
        b"@@ -10,2 +11,3 @@\n+x\n same\n+y\n\\ No newline at end of file\n"
    )
    expected = {2: "new one", 3: "new two", 11: "x", 13: "y"}
    for piece_bytes in (1, 10, 1 << 20):
        seen: dict[int, str] = {}
        for piece in added_line_pieces(raw, piece_bytes):
            for hunk in parse_hunks(piece):
                seen.update({line.new_line: line.text for line in hunk.lines if line.new_line is not None})
        assert seen == expected
