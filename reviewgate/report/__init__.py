"""The sink registry, in publishing order. A new sink is its module and one line here.

Order matters where a sink reads what an earlier one logged: annotations note what they
left out, and the summary and the step summary say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from reviewgate import progress
from reviewgate.report.base import FORKED_SINKS_MIN_FINDINGS, PublishLog, Sink, SinkContext
from reviewgate.report.console import ConsoleSink
from reviewgate.report.gitlab import CodeQualitySink
from reviewgate.report.json_report import JsonReportSink
from reviewgate.report.junit import JunitSink
from reviewgate.report.sarif import SarifSink
from reviewgate.report.summary import SummarySink
from reviewgate.result import GateResult


class SinkOnUse:
    """A sink whose module loads on the first run it can publish in (`publishes_in`): the forge
    sinks and the forge clients they use on a run with a forge, GitHub's annotations and step
    outputs in GitHub Actions. A local run's start-up never pays for them."""

    def __init__(self, name: str, load: Callable[[], Sink], publishes_in: Callable[[GateResult], bool]) -> None:
        self.name = name
        self._load = load
        self._publishes_in = publishes_in
        self._sink: Sink | None = None

    def loaded(self) -> Sink:
        if self._sink is None:
            self._sink = self._load()
        return self._sink

    def applies(self, result: GateResult) -> bool:
        return self._publishes_in(result) and self.loaded().applies(result)

    def publish(self, result: GateResult, context: SinkContext) -> None:
        self.loaded().publish(result, context)


def _on_a_forge(result: GateResult) -> bool:
    return result.forge is not None


def _in_github_actions(result: GateResult) -> bool:
    return result.ci.is_github


def _check_run() -> Sink:
    from reviewgate.report.github_checks import GithubCheckRunSink

    return GithubCheckRunSink()


def _pull_request_comment() -> Sink:
    from reviewgate.report.pr_comment import PullRequestCommentSink

    return PullRequestCommentSink()


def _inline_comments() -> Sink:
    from reviewgate.report.inline_comments import InlineCommentsSink

    return InlineCommentsSink()


def _annotations() -> Sink:
    from reviewgate.report.github_annotations import GithubAnnotationsSink

    return GithubAnnotationsSink()


def _step_outputs() -> Sink:
    from reviewgate.report.github_step import GithubStepSink

    return GithubStepSink()


json_report_sink, code_quality_sink, sarif_sink = JsonReportSink(), CodeQualitySink(), SarifSink()
sinks: list[Sink] = [
    json_report_sink,
    JunitSink(),
    code_quality_sink,
    sarif_sink,
    SinkOnUse("github-check-run", _check_run, _on_a_forge),
    SinkOnUse("pr-comment", _pull_request_comment, _on_a_forge),
    SinkOnUse("inline-comments", _inline_comments, _on_a_forge),
    SinkOnUse("github-annotations", _annotations, _in_github_actions),
    SummarySink(),
    SinkOnUse("github-step", _step_outputs, _in_github_actions),
    ConsoleSink(),
]


def publish(result: GateResult, stdout: TextIO) -> PublishLog:
    progress.stage("publish")
    context = SinkContext(stdout=stdout)
    if len(result.findings) < FORKED_SINKS_MIN_FINDINGS:  # the usual run: no fork, nor its module loaded
        for sink in sinks:
            if sink.applies(result):
                sink.publish(result, context)
        return context.log
    from reviewgate.report.forked_sinks import can_fork, written_beside

    # The machine-read files touch neither the console nor the log: forked when that pays.
    forkable = (json_report_sink, code_quality_sink, sarif_sink) if can_fork(result) else ()
    beside = [sink for sink in sinks if sink in forkable and sink.applies(result)]
    with written_beside(beside, result, context):
        for sink in sinks:
            if sink not in beside and sink.applies(result):
                sink.publish(result, context)
    return context.log
