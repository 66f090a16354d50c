"""The sink registry, in publishing order. A new sink is its module and one line here.

Order matters where a sink reads what an earlier one logged: annotations note what they
left out, and the summary and the step summary say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from reviewgate.report.base import PublishLog, Sink, SinkContext
from reviewgate.report.console import ConsoleSink
from reviewgate.report.github_annotations import GithubAnnotationsSink
from reviewgate.report.github_step import GithubStepSink
from reviewgate.report.gitlab import CodeQualitySink
from reviewgate.report.json_report import JsonReportSink
from reviewgate.report.junit import JunitSink
from reviewgate.report.sarif import SarifSink
from reviewgate.report.summary import SummarySink
from reviewgate.result import GateResult


class ForgeSink:
    """A sink that publishes only to a forge (GitHub, GitLab): its module and the forge clients
    it uses load on the first run that has a forge, so a local run's start-up never pays for them."""

    def __init__(self, name: str, load: Callable[[], Sink]) -> None:
        self.name = name
        self._load = load
        self._sink: Sink | None = None

    def loaded(self) -> Sink:
        if self._sink is None:
            self._sink = self._load()
        return self._sink

    def applies(self, result: GateResult) -> bool:
        return result.forge is not None and self.loaded().applies(result)

    def publish(self, result: GateResult, context: SinkContext) -> None:
        self.loaded().publish(result, context)


def _check_run() -> Sink:
    from reviewgate.report.github_checks import GithubCheckRunSink

    return GithubCheckRunSink()


def _pull_request_comment() -> Sink:
    from reviewgate.report.pr_comment import PullRequestCommentSink

    return PullRequestCommentSink()


def _inline_comments() -> Sink:
    from reviewgate.report.inline_comments import InlineCommentsSink

    return InlineCommentsSink()


sinks: list[Sink] = [
    JsonReportSink(),
    JunitSink(),
    CodeQualitySink(),
    SarifSink(),
    ForgeSink("github-check-run", _check_run),
    ForgeSink("pr-comment", _pull_request_comment),
    ForgeSink("inline-comments", _inline_comments),
    GithubAnnotationsSink(),
    SummarySink(),
    GithubStepSink(),
    ConsoleSink(),
]


def publish(result: GateResult, stdout: TextIO) -> PublishLog:
    context = SinkContext(stdout=stdout)
    for sink in sinks:
        if sink.applies(result):
            sink.publish(result, context)
    return context.log
