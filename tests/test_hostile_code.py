"""The branch's code made to break a parser ends no review: Python nested deeper than CPython's
parser or tree builder allows reads as code that does not parse, as CPython itself would refuse it,
and the review of everything else goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.engine import run_lenses
from reviewgate.reviewers.builtin.given_up_parses import take_given_up
from reviewgate.reviewers.builtin.languages.syntax_tree import parse
from reviewgate.reviewers.builtin.workers import WORKERS_VARIABLE
from testing.cli import run_cli
from testing.lenses import review_change, review_request
from testing.repo import make_repo

# CPython raises RecursionError building the tree of the first and MemoryError parsing the second.
DEEP_EXPRESSION = "TOTAL = " + " + ".join(["a"] * 30_000) + "\n"
LONG_ELIF = "def pick(a):\n    if a:\n        pass\n" + "    elif a:\n        pass\n" * 20_000
SWALLOWED = "def load(path):\n    try:\n        return open(path).read()\n    except Exception:\n        pass\n"


def test_python_nested_past_the_parser_reads_as_code_that_does_not_parse(tmp_path: Path) -> None:
    branch = {"app/deep.py": DEEP_EXPRESSION, "app/chain.py": LONG_ELIF, "app/load.py": SWALLOWED}
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    swallowed = sorted((item.path, item.line) for item in findings if item.rule == "correctness/swallowed-exception")
    assert swallowed == [("app/load.py", 4)]  # the other files held nothing back


def test_a_run_on_such_a_branch_completes_with_a_verdict(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "x\n", ".gitignore": ".reviewgate/\n"},
                     {"app/deep.py": DEEP_EXPRESSION, "app/chain.py": LONG_ELIF})
    result = run_cli(repo.path, "run", "--base", "main", "--reviewer", "builtin", "--no-verify")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert result.report()["verdict"] in ("approve", "request_changes")


def test_a_file_whose_parse_is_given_up_is_named_on_stderr(tmp_path: Path) -> None:
    """A Go file of `<!--` lines (tree-sitter's Go grammar takes minutes on 40 KB of them): its
    parse is given up within the budget, the run completes, and a warning names the file."""
    repo = make_repo(tmp_path, {"README.md": "x\n", ".gitignore": ".reviewgate/\n"},
                     {"cmd/slow.go": "package main\n" + "<!--\n" * 8_000})
    result = run_cli(repo.path, "run", "--base", "main", "--reviewer", "builtin", "--no-verify")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "reviewgate: warning: cmd/slow.go: not parsed, its go parse went over the budget" in result.stderr
    notes = next(outcome["notes"] for outcome in result.report()["reviewers"] if outcome["reviewer"] == "builtin")
    assert notes == ["cmd/slow.go: not parsed (its syntax tree went over the parse budget), read by the line lenses only"]


# Java that tree-sitter's Java grammar takes minutes on (2,000 `<!--` lines: 3.7 s), with a
# handler, so the wrong-exception lens parses it in the per-file stage as the tests lens does.
SLOW_JAVA = "<!--\n" * 8_000 + "class Slow {\n  void f() { try { g(); } catch (NumberFormatException e) { } }\n}\n"


def test_a_parse_given_up_in_several_processes_is_named_once(tmp_path: Path) -> None:
    """With the lenses in forked workers (three processes: the per-file stage in a pool, the tests
    lens parsing the head side again here), the file is given up in more than one process and
    named once in the reviewer's notes."""
    filler = {f"app/module_{number}.py": "".join(f"def f{index}(a):\n    return a + {index}\n" for index in range(60))
              for number in range(50)}
    repo = make_repo(tmp_path, {"README.md": "x\n", ".gitignore": ".reviewgate/\n"},
                     {**filler, "src/Slow.java": SLOW_JAVA})
    result = run_cli(repo.path, "run", "--base", "main", "--reviewer", "builtin", "--no-verify",
                     env={"REVIEWGATE_WORKERS": "3"})
    assert result.returncode in (0, 1), result.stderr[-2000:]
    notes = next(outcome["notes"] for outcome in result.report()["reviewers"] if outcome["reviewer"] == "builtin")
    assert notes == ["src/Slow.java: not parsed (its syntax tree went over the parse budget), read by the line lenses only"]


class ParsesGoOverTheChange:
    """A whole-change lens that parses each Go file of the change with tree-sitter (none of the
    builtin whole-change lenses does yet: the send-back is there for the first that will)."""

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in request.target.files:
            data = request.head.read_bytes(change.path) if change.path.endswith(".go") else None
            if data is not None:
                parse("go", data, change.path)
        return iter(())


def test_a_parse_given_up_in_the_whole_change_worker_is_sent_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-change lenses that need no function shapes run in a forked worker of their own: a
    file it gave up is named in this process, where the reviewer's notes are written."""
    filler = {f"app/module_{number}.py": "".join(f"def f{index}(a):\n    return a + {index}\n" for index in range(60))
              for number in range(50)}
    repo = make_repo(tmp_path, {"README.md": "x\n"}, {**filler, "cmd/slow.go": "package main\n" + "<!--\n" * 8_000})
    request = review_request(repo.path)
    monkeypatch.setenv(WORKERS_VARIABLE, "2")
    take_given_up()  # nothing given up before this review counts
    lens = ParsesGoOverTheChange()
    run_lenses(request, [lens], {lens})
    assert take_given_up() == ["cmd/slow.go"]
