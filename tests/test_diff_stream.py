"""Streaming the diff gives exactly what parsing it whole gives, however git's output is cut."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewgate.freeze.diff import FileChange
from reviewgate.freeze.diff_files import iter_diff_stream, parse_diff
from reviewgate.freeze.git import GitFailure, run_git, stream_git
from testing.repo import make_repo

PATCH = b"".join(
    f"diff --git a/f{number}.py b/f{number}.py\nindex 1111111..2222222 100644\n--- a/f{number}.py\n"
    f"+++ b/f{number}.py\n@@ -1,2 +1,2 @@ def f():\n-old {number}\n+new {number}\r\n context\n"
    f"@@ -20 +20 @@\n-x\n+y\n".encode()
    for number in range(6)
) + b"diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..3333333\nBinary files differ\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(PATCH)), max_size=12))
def test_any_chunking_parses_the_same(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [PATCH[start:end] for start, end in zip([0, *points], [*points, len(PATCH)], strict=True)]
    streamed = list(iter_diff_stream(chunks))
    whole = parse_diff(PATCH)
    assert streamed == whole
    assert [change.canonical_digest for change in streamed] == [change.canonical_digest for change in whole]
    assert [change.hunks for change in streamed] == [change.hunks for change in whole]


def test_lazy_hunks_equal_what_the_diff_says() -> None:
    first = parse_diff(PATCH)[0]
    assert first.stats.added_lines == 2 and first.stats.removed_lines == 2
    assert first.added_line_numbers() == {1, 20}
    assert first.added_lines() == {1: "new 0\r", 20: "y"}
    assert [hunk.new_start for hunk in first.hunks] == [1, 20]
    assert parse_diff(PATCH)[-1].is_binary


def test_stream_git_matches_run_git_and_reports_failure(tmp_path: Path) -> None:
    built = make_repo(tmp_path, {"a.txt": "x\n" * 50}, {"a.txt": "y\n" * 50})
    streamed = b"".join(stream_git(built.path, "diff", "main", "feature", chunk_bytes=7))
    assert streamed == run_git(built.path, "diff", "main", "feature").stdout
    with pytest.raises(GitFailure, match="git diff main no-such-ref") as failure:
        b"".join(stream_git(built.path, "diff", "main", "no-such-ref"))
    assert failure.value.returncode == 128 and b"no-such-ref" in failure.value.stderr


def test_a_parsed_file_equals_one_built_from_its_hunks() -> None:
    parsed = parse_diff(PATCH)[0]
    built = FileChange(
        path=parsed.path,
        old_path=parsed.old_path,
        status=parsed.status,
        old_mode=parsed.old_mode,
        new_mode=parsed.new_mode,
        hunks=parsed.hunks,
    )
    assert built == parsed and "raw_hunks" not in repr(parsed)
    assert built.stats.added_lines == parsed.stats.added_lines
    assert built.stats.removed_lines == parsed.stats.removed_lines == 2
    assert built.opening_text == parsed.opening_text == "new 0\r\ncontext"
