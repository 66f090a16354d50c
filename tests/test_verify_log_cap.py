"""Step logs kept to a size: the first and the last part of a step's output, on disk and on the
console, with a line saying how many bytes were left out. Real steps printing megabytes."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewgate.ci.context import CiContext
from reviewgate.verify.log_cap import HeadTailCap
from reviewgate.verify.manifest import parse_manifest
from reviewgate.verify.outcome import VerifyStatus
from reviewgate.verify.runner import run_verify
from testing.cli import run_cli
from testing.repo import make_repo
from testing.verify_app import PYTHON

pytestmark = pytest.mark.timeout(120)

LIMIT = 64 * 1024
# 27 MB (320 lines of 84,001 bytes) between a first and a last line.
FLOOD = (
    f"{PYTHON} -c 'import sys; print(\"FIRST LINE\", flush=True); "
    "[sys.stdout.write(\"é-x\" * 21000 + \"\\\\n\") for _ in range(320)]; print(\"LAST LINE\")'"
)


@given(st.lists(st.text(min_size=0, max_size=300), max_size=60), st.integers(min_value=2, max_value=2000))
@settings(max_examples=200, deadline=None)
def test_the_cap_keeps_a_prefix_and_a_suffix_and_counts_the_rest(pieces: list[str], limit: int) -> None:
    cap = HeadTailCap(limit)
    head = "".join(cap.feed(piece) for piece in pieces)
    end = cap.finish()
    whole = "".join(pieces).encode("utf-8")
    if cap.left_out == 0:
        assert (head + end).encode("utf-8") == whole
        return
    marker_start = end.index("\n… reviewgate: ")
    marker_end = end.index(" …\n", marker_start) + 3
    tail = end[marker_end:].encode("utf-8")
    assert f"{cap.left_out} bytes of output left out here" in end[marker_start:marker_end]
    kept_head = head.encode("utf-8")
    assert whole.startswith(kept_head) and whole.endswith(tail)
    assert len(kept_head) <= limit // 2 and len(tail) <= limit - limit // 2
    assert len(kept_head) + cap.left_out + len(tail) == len(whole)


def test_a_flooding_step_is_cut_on_disk_and_on_the_console(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    manifest = parse_manifest({"test": FLOOD}, ".prepcook/scripts.toml")
    console = io.StringIO()
    outcome = run_verify(manifest, repo=repo, output_dir=tmp_path / "out", ci=CiContext(provider="github"),
                         stdout=console, environ={"PATH": "/usr/bin:/bin"}, log_limit=LIMIT)
    assert outcome.status is VerifyStatus.PASSED, outcome.reason
    log = (tmp_path / "out/verify/test.log").read_text()
    assert log.startswith("FIRST LINE\n") and log.endswith("LAST LINE\n")
    assert len(log.encode()) < LIMIT + 512
    left_out = int(log.split("\n… reviewgate: ")[1].split(" bytes of output left out here")[0])
    assert left_out > 19_000_000
    shown = console.getvalue()
    assert "FIRST LINE" in shown and "LAST LINE" in shown and "bytes of output left out here" in shown
    assert len(shown.encode()) < LIMIT + 4096
    (note,) = outcome.notes
    assert note.startswith("test: ") and "left out of test.log and the CI log" in note


def test_the_log_limit_comes_from_the_config(tmp_path: Path) -> None:
    manifest = f"[test]\nrun = '''{FLOOD}'''\n"
    repo = make_repo(tmp_path, {"README.md": "x\n", ".prepcook/scripts.toml": manifest,
                                ".reviewgate.toml": f"[verify]\nlog_limit = {LIMIT}\n"}, {"README.md": "y\n"}).path
    result = run_cli(repo, "run", "--base", "main", "--output-dir", "out")
    assert result.returncode == 0, result.stderr
    assert (repo / "out/verify/test.log").stat().st_size < LIMIT + 512
    assert len(result.stdout.encode()) < LIMIT + 16 * 1024
    assert any("bytes of output left out" in note for note in result.report()["verify"]["notes"])


def test_output_under_the_limit_is_kept_whole() -> None:
    cap = HeadTailCap(1000)
    text = "".join(random.choice("ab\n") for _ in range(999))
    assert cap.feed(text) + cap.finish() == text and cap.left_out == 0
