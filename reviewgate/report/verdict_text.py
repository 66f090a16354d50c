"""What a verdict means and what to do next, in words for a developer who never read the docs:
one explanation for the console, summary.md, the step summary, the check run and the PR comment."""

from __future__ import annotations

from typing import NamedTuple

from reviewgate.findings import FindingClass
from reviewgate.gate import Decision, Route
from reviewgate.result import GateResult

# The verdict's name where people read it; report.json keeps the machine values.
VERDICT_NAMES = {
    Decision.APPROVE: "approved",
    Decision.REQUEST_CHANGES: "changes requested",
    Decision.BLOCKED: "not reviewed",
}
# How to answer a finding one thinks is wrong: the same words everywhere a blocking finding is shown.
ANSWER_A_FINDING = (
    "If one is wrong, answer it with a reason: a comment `reviewgate: ignore[<rule id>] <reason>` on its "
    "line, or a pull request comment `REVIEW-REJECTED: <file>:<line> <reason>`; a maintainer can overrule "
    "one with `ACCEPTED: <finding id> <reason>`."
)


class Explanation(NamedTuple):
    """The verdict in words: what it is, what it means and what to do now."""

    verdict: str  # "changes requested"
    meaning: str  # "2 findings must be fixed before merge"
    next_steps: tuple[str, ...]  # what to do now, one sentence each


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def explain(result: GateResult) -> Explanation:
    verdict = result.verdict
    name = VERDICT_NAMES[verdict.decision]
    blocking = len(verdict.blocking)
    if verdict.decision is Decision.BLOCKED:
        return Explanation(name, "the review could not be finished; this is not a judgement of your code", (
            "Fix what the reasons name (a missing key, a reviewer that could not be reached, the app's setup), "
            "or re-run the job if it was a passing failure.",
        ))
    if verdict.decision is Decision.REQUEST_CHANGES:
        if verdict.route is Route.DEBUGGING and not result.verify.steps:
            # No step ran: the change took away what the verify needs (its manifest).
            return Explanation(name, "the verify could not run on this change", (
                f"Fix the {_count(blocking, 'blocking finding')} (marked `blocks`): it says what the verify "
                "is missing. Then push again.",
            ))
        if verdict.route is Route.DEBUGGING:
            steps = ["Read the failing step's log (verify/ in the outputs), fix the failure and push again."]
            if blocking:
                steps += [f"Also fix the {_count(blocking, 'blocking finding')} (marked `blocks`).", ANSWER_A_FINDING]
            return Explanation(name, "the app's own tests failed on this change (the verify)", tuple(steps))
        return Explanation(name, f"{_count(blocking, 'finding')} must be fixed before merge", (
            "Fix each blocking finding (marked `blocks`) and push again.", ANSWER_A_FINDING,
        ))
    shown = len(result.findings)
    if result.target.is_empty and result.target.mode != "bundle" and not shown:
        return Explanation(name, "nothing was reviewed: the change is empty (base and head have the same content)",
                           ())
    if not result.config.review.fail_on:
        meaning = "report-only mode: findings are listed and none blocks"
        return Explanation(name, meaning, (f"Read the {_count(shown, 'finding')} listed; nothing has to be fixed "
                                           "before merge.",) if shown else ())
    if verdict.route is Route.DEBT:
        patterns = sum(1 for item in result.findings
                       if item.finding_class is FindingClass.SYSTEMATIC and item.dismissed is None)
        return Explanation(name, "nothing in this change blocks merging", (
            f"{_count(patterns, 'finding')} about how the code is built (repeated or structural patterns) "
            "did not block; worth a follow-up change.",
        ))
    listed = (f"The {_count(shown, 'finding')} listed is advice; it does not have to be fixed before merge."
              if shown == 1 else f"The {_count(shown, 'finding')} listed are advice; none has to be fixed before merge.")
    advice = (listed,) if shown else ()
    return Explanation(name, "nothing in this change blocks merging", advice)
