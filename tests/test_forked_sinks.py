"""The machine-read files of a large report, written in a forked process beside the other sinks:
the same bytes as written in this process, and a failure there still fails the publish."""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path

import pytest

from reviewgate.report import forked_sinks, publish
from reviewgate.report.base import SinkContext
from reviewgate.result import GateResult
from testing.results import SAMPLE_FINDINGS, sample_finding, sample_result

MANY = (*SAMPLE_FINDINGS, *(sample_finding(path=f"app/module_{number}.py", line=number % 50 + 1,
                                           title=f"Broad exception handler number {number} does nothing")
                            for number in range(forked_sinks.MIN_FINDINGS)))


def test_a_large_report_forks_its_machine_read_files() -> None:
    assert forked_sinks.can_fork(sample_result(Path("out"), findings=MANY))
    assert not forked_sinks.can_fork(sample_result(Path("out"), findings=SAMPLE_FINDINGS))


def test_the_forked_files_are_the_bytes_written_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # relative output dirs: the printed paths differ only by the dir's name
    forked, alone = sample_result(Path("forked"), findings=MANY), sample_result(Path("alone"), findings=MANY)
    forked_out, alone_out = io.StringIO(), io.StringIO()
    publish(forked, forked_out)
    monkeypatch.setattr(forked_sinks, "MIN_FINDINGS", len(MANY) + 1)
    publish(alone, alone_out)
    names = sorted(path.name for path in (tmp_path / "alone").iterdir())
    assert names == sorted(path.name for path in (tmp_path / "forked").iterdir())
    assert {"report.json", "review.sarif", "codequality.json", "junit.xml", "summary.md"} <= set(names)
    for name in names:
        assert (tmp_path / "forked" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes(), name
    assert forked_out.getvalue().replace("forked", "alone") == alone_out.getvalue()


def test_a_failure_in_the_forked_writer_fails_the_publish(tmp_path: Path) -> None:
    output = tmp_path / "out"
    (output / "review.sarif").mkdir(parents=True)  # the SARIF file cannot replace a directory
    with pytest.raises(IsADirectoryError):
        publish(sample_result(output, findings=MANY), io.StringIO())
    # The forked writer failed on its own core: this process's sinks were written meanwhile.
    assert (output / "summary.md").is_file() and (output / "junit.xml").is_file()



def test_a_forked_failure_says_what_the_same_failure_says_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "out"
    (output / "review.sarif").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as forked:
        publish(sample_result(output, findings=MANY), io.StringIO())
    monkeypatch.setattr(forked_sinks, "MIN_FINDINGS", len(MANY) + 1)
    with pytest.raises(IsADirectoryError) as alone:
        publish(sample_result(output, findings=MANY), io.StringIO())
    # The same error, bar the name of the temporary file each writer made (the run prints it as is).
    said = [(error.errno, error.strerror, error.filename2) for error in (forked.value, alone.value)]
    assert said[0] == said[1] == (21, "Is a directory", str(output / "review.sarif"))


class _KilledWhilePublishing:
    """A sink whose writer dies of a signal half way, as one the kernel kills would."""

    name = "killed"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        (result.output_dir / "partial.txt").write_text("half")
        os.kill(os.getpid(), signal.SIGKILL)


def test_a_forked_writer_killed_by_a_signal_fails_the_publish(tmp_path: Path) -> None:
    result = sample_result(tmp_path, findings=MANY)
    written_here = []
    with pytest.raises(RuntimeError, match=r"report writer for _KilledWhilePublishing ended with wait status 9"):
        with forked_sinks.written_beside([_KilledWhilePublishing()], result, SinkContext(stdout=io.StringIO())):
            written_here.append("the other sinks")
    assert written_here == ["the other sinks"]
