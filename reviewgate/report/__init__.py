"""The sink registry, in publishing order. A new sink is its module and one line here.

Order matters where a sink reads what an earlier one logged: annotations note what they
left out, and the summary and the step summary say so.
"""

from __future__ import annotations

from typing import TextIO

from reviewgate.report.base import PublishLog, Sink, SinkContext
from reviewgate.report.console import ConsoleSink
from reviewgate.report.github_annotations import GithubAnnotationsSink
from reviewgate.report.github_checks import GithubCheckRunSink
from reviewgate.report.github_step import GithubStepSink
from reviewgate.report.gitlab import CodeQualitySink
from reviewgate.report.inline_comments import InlineCommentsSink
from reviewgate.report.json_report import JsonReportSink
from reviewgate.report.junit import JunitSink
from reviewgate.report.pr_comment import PullRequestCommentSink
from reviewgate.report.sarif import SarifSink
from reviewgate.report.summary import SummarySink
from reviewgate.result import GateResult

sinks: list[Sink] = [
    JsonReportSink(),
    JunitSink(),
    CodeQualitySink(),
    SarifSink(),
    GithubCheckRunSink(),
    PullRequestCommentSink(),
    InlineCommentsSink(),
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
