"""Secret masking of streamed output, the log tail of a finding, the app's JUnit import."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from reviewgate.ci.context import CiContext
from reviewgate.verify.junit_import import read_junit
from reviewgate.verify.logs import MASK, CiLog, SecretMasker, StepLog, log_tail

SECRETS = ("hunter2", "postgres://user:pa55@db/app", "abc")


@given(
    parts=st.lists(
        st.sampled_from(["x", " ", "\n", "hunt", "er2", "hunter2", "pa55", "abc", "ab", "c"]), max_size=40
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_stream_masking_equals_masking_the_whole_text(parts: list[str], cuts: list[int]) -> None:
    """However the output is split into chunks, the stream is masked as the whole text is."""
    masker = SecretMasker(SECRETS)
    text = "".join(parts)
    stream = masker.stream()
    pieces, start = [], 0
    for cut in sorted(min(cut, len(text)) for cut in cuts):
        pieces.append(stream.feed(text[start:cut]))
        start = cut
    pieces.append(stream.feed(text[start:]))
    pieces.append(stream.flush())
    streamed = "".join(pieces)
    assert streamed == masker.mask(text)
    for secret in SECRETS:
        assert secret not in streamed


def test_finished_lines_are_released_at_once() -> None:
    stream = SecretMasker(["a-long-secret-value"]).stream()
    assert stream.feed("test started\n") == "test started\n"
    assert stream.feed("partial a-long") == ""  # may still become the secret
    assert stream.feed("-secret-value!\n") == f"partial {MASK}!\n"


def test_multiline_secret_is_masked_line_by_line() -> None:
    masker = SecretMasker(["-----BEGIN KEY-----\nAAAABBBB\n-----END KEY-----\n", ""])
    assert masker.mask("key: AAAABBBB") == f"key: {MASK}"
    assert "AAAABBBB" not in masker.mask("-----BEGIN KEY-----\nAAAABBBB\n-----END KEY-----")


def test_log_tail_keeps_the_end(tmp_path: Path) -> None:
    log = tmp_path / "test.log"
    log.write_text("".join(f"line {number}\n" for number in range(1000)))
    tail = log_tail(log, lines=3)
    assert tail == "line 997\nline 998\nline 999"
    assert log_tail(tmp_path / "missing.log") == ""


def test_junit_import_reads_suites_errors_and_skips(tmp_path: Path) -> None:
    path = tmp_path / "results.xml"
    path.write_text(
        '<testsuite name="unit"><testcase classname="m" name="ok"/>'
        '<testcase name="broken"><error message="boom hunter2"/></testcase>'
        '<testcase classname="m" name="later"><skipped/></testcase>'
        '<testsuite name="inner"><testcase name="nested"/></testsuite></testsuite>'
    )
    imported = read_junit(path, SecretMasker(["hunter2"]))
    assert imported.problem == ""
    assert imported.cases == (
        ("unit", "m.ok", True, ""),
        ("unit", "broken", False, f"boom {MASK}"),
        ("unit", "m.later", True, "skipped"),
        ("inner", "nested", True, ""),
    )
    assert imported.failed == 1


def test_junit_import_says_why_it_could_not_read(tmp_path: Path) -> None:
    assert "not found" in read_junit(tmp_path / "none.xml", SecretMasker([])).problem
    bad = tmp_path / "bad.xml"
    bad.write_text("<testsuite><testcase")
    assert "not readable JUnit XML" in read_junit(bad, SecretMasker([])).problem
    other = tmp_path / "other.xml"
    other.write_text("<html/>")
    assert "root element <html>" in read_junit(other, SecretMasker([])).problem


def test_a_closed_ci_log_does_not_stop_the_step_log(tmp_path: Path) -> None:
    closed = io.StringIO()
    closed.close()
    ci_log = CiLog(closed, CiContext(provider="github"), SecretMasker([]))
    log = StepLog(tmp_path / "test.log", SecretMasker([]), ci_log)
    ci_log.begin("test", "verify: test")
    log.note("still written")
    log.close()
    assert (tmp_path / "test.log").read_text() == "still written\n"
