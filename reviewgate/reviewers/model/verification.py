"""The second look: before a model's blocker or major finding can block, one more request tries
to refute it.

The verifier (the same model, or `[reviewer.NAME] verifier = "OTHER"`) gets the finding, the code
it cites at the head with the function around it and that function's callers, and that code at
the merge base; never the pull request text or commit messages. It judges weight as well as
truth: `holds` with a failure scenario, `holds_at_lower_severity` with the severity the
contract gives it (a true missing test for a getter is not major), or `refuted` with a concrete
reason (schemas/verification-contract.schema.json, repaired once like the review). A refuted
finding is kept in the report, dismissed with the refutation; a lowered one keeps its place at
the lower severity, its body saying why; a verifier that gives no usable answer blocks the
review: an unchecked finding is never approved away.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from reviewgate.cache_keys import cache_key, text_digest
from reviewgate.chunk_store import ChunkStore
from reviewgate.config import DEFAULT_MIN_CONFIDENCE, Config, ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.errors import ConfigError
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus, Usage
from reviewgate.reviewers.model.asking import AskFailed, ask_with_repair, usage_of
from reviewgate.reviewers.model.contract import ContractError, check_schema, extract_json, packaged_schema, wire_form
from reviewgate.reviewers.model.deadline import chunk_deadline
from reviewgate.reviewers.model.excerpts import base_excerpt, callers_excerpt, head_excerpt
from reviewgate.reviewers.model.options import ModelOptions, settings_identity
from reviewgate.reviewers.model.prompt import (
    AnswerFormat,
    Conversation,
    Message,
    answer_shape,
    fill,
    severity_contract,
    template,
)
from reviewgate.reviewers.model.redaction import Redaction, redact_text
from reviewgate.reviewers.model.rendering import CHARACTERS_PER_TOKEN, estimate_tokens
from reviewgate.text import printable, truncate

if TYPE_CHECKING:
    from reviewgate.reviewers.model.reply import Reply, Transport

SCHEMA_RESOURCE = "verification-contract.schema.json"
CHECKED_SEVERITIES = frozenset({Severity.BLOCKER, Severity.MAJOR})
API_PROVIDERS = ("openai", "anthropic")
PROMPT_MARGIN_TOKENS = 300  # the estimate is rough, and the repair turn adds a little
MAX_FINDING_CHARS = 6000  # a finding is a paragraph; a huge one is cut, not paid for in full


@dataclass(frozen=True)
class Verifier:
    """Who takes the second look: the reviewer's own model, or another configured one."""

    name: str
    transport: Transport
    options: ModelOptions
    key_variable: str | None
    identity: dict[str, Any]


class ReviewingModel(Protocol):
    """What the second look needs of a model reviewer (engine.py's ModelReviewer): who it is, how
    it asks, and its second-look policy. The engine hands itself over; this module never imports it."""

    name: str
    settings: ReviewerSettings
    options: ModelOptions
    transport: Transport
    key_variable: str | None
    second_look: SecondLookPolicy


def _verifier_of(reviewer: ReviewingModel) -> Verifier:
    return Verifier(reviewer.name, reviewer.transport, reviewer.options, reviewer.key_variable,
                    {"reviewer": reviewer.name, **settings_identity(reviewer.settings)})


@dataclass(frozen=True)
class SecondLookPolicy:
    verifier: Verifier | None  # None: verify_findings = false
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    own: bool = True

    @classmethod
    def own_model(cls, reviewer: ReviewingModel) -> SecondLookPolicy:
        """The default before the config is attached: the reviewer's own model checks."""
        return cls(_verifier_of(reviewer) if reviewer.options.verify_findings else None)

    @classmethod
    def from_config(cls, reviewer: ReviewingModel, config: Config,
                    other_model: Callable[[ReviewerSettings], ReviewingModel]) -> SecondLookPolicy:
        """The policy `[review] min_confidence` and the reviewer's `verifier` make; `other_model`
        builds the reviewer `verifier = NAME` names, from its settings."""
        minimum = config.review.min_confidence
        name = reviewer.options.verifier
        if not reviewer.options.verify_findings:
            return cls(None, minimum)
        if name is None or name == reviewer.name:
            return cls(_verifier_of(reviewer), minimum)
        other = other_model(verifier_settings(config, reviewer.settings, name))
        return cls(_verifier_of(other), minimum, own=False)

    def identity(self) -> dict[str, Any]:
        """What changes the second look's outcome, for the review cache's key."""
        if self.verifier is None:
            return {"on": False}
        return {"on": True, "verifier": self.verifier.identity, "min_confidence": self.min_confidence}


def verifier_settings(config: Config, reviewer: ReviewerSettings, name: str) -> ReviewerSettings:
    """The `[reviewer.NAME]` table that `verifier = NAME` names; a ConfigError naming the key when
    there is none or it is not an API model (an agent CLI would need its own snapshot)."""
    where = f"{reviewer.source}: reviewer.{reviewer.name}.verifier"
    if name not in config.reviewers:
        raise ConfigError(f"{where}: expected the name of a configured [reviewer.NAME] table, got {name!r}")
    settings = config.reviewers[name]
    if settings.provider not in API_PROVIDERS:
        raise ConfigError(f"{where}: {name!r} has provider {settings.provider!r}; the second look needs "
                          f"a {' or '.join(API_PROVIDERS)} reviewer")
    return settings


def answer_format() -> AnswerFormat:
    return AnswerFormat(
        name="record_verification",
        description="Record the second look at the finding: holds with the failure scenario, holds at a lower "
                    "severity with why, or refuted.",
        schema=wire_form(packaged_schema(SCHEMA_RESOURCE)),
        repair_template="verification-repair.md",
    )


HOLDS, LOWER, REFUTED = "holds", "holds_at_lower_severity", "refuted"


@dataclass(frozen=True)
class Judgement:
    verdict: str  # holds | holds_at_lower_severity | refuted
    reason: str
    failure_scenario: str
    severity: Severity | None = None  # holds_at_lower_severity: the severity it has


def parse_judgement(text: str, severity: Severity | None = None) -> Judgement:
    """A validated judgement of a finding of `severity`, or a ContractError saying what is wrong
    (for the repair request). `confirmed`, the earlier word for `holds`, reads as it; a missing
    `severity` as null."""
    document = extract_json(text)
    if isinstance(document, dict) and isinstance(document.get("verdict"), str):
        verdict = document["verdict"].strip().lower()
        document = {"severity": None, **document, "verdict": HOLDS if verdict == "confirmed" else verdict}
    check_schema(document, packaged_schema(SCHEMA_RESOURCE), "verification")
    reason = document["reason"].strip()
    scenario = (document["failure_scenario"] or "").strip()
    if document["verdict"] == HOLDS and not scenario:
        raise ContractError("a finding that holds needs the failure scenario: the inputs or state, then the wrong outcome")
    if not reason:
        raise ContractError("reason is empty: say concretely why the finding holds or does not")
    lower = Severity(document["severity"]) if document["severity"] else None
    if document["verdict"] == LOWER:
        if lower is None:
            raise ContractError("holds_at_lower_severity needs the severity it has: major, minor or nit")
        if severity is not None and lower.rank >= severity.rank:
            raise ContractError(f"holds_at_lower_severity needs a severity below the finding's {severity.value}, "
                                f"got {lower.value}")
    return Judgement(document["verdict"], reason, scenario, lower if document["verdict"] == LOWER else None)


def needs_second_look(finding: Finding, min_confidence: float) -> bool:
    """Findings that could block: blocker or major, not set aside, not a product question, and
    not below the confidence that lets a finding block."""
    confidence = finding.extra.get("confidence")
    return (
        finding.severity in CHECKED_SEVERITIES
        and finding.dismissed is None
        and finding.finding_class is not FindingClass.PRODUCT_QUESTION
        and (not isinstance(confidence, (int, float)) or confidence >= min_confidence)
    )


def _finding_text(finding: Finding) -> str:
    lines = [
        f"class: {finding.finding_class.value}",
        f"severity: {finding.severity.value}",
        f"category: {finding.category}",
        f"where: {finding.location}" + (f"-{finding.end_line}" if finding.end_line else ""),
        f"title: {finding.title}",
        "body:",
        finding.body,
    ]
    return truncate(printable("\n".join(lines)), MAX_FINDING_CHARS, "…")


@cache
def verification_system(schema_sent: bool = False) -> str:
    """The second look's system message: the same bytes in every request of a form, for the
    provider's prompt cache (prompt.review_system); the nonce is named in the user message. It
    gives the answer's shape only when the request does not carry the schema."""
    return fill(template("verification-system.md"),
                {"shape": "" if schema_sent else answer_shape(answer_format().schema),
                 "severities": severity_contract()})


def build_verification(request: ReviewRequest, finding: Finding, max_input_tokens: int) -> Conversation:
    """The second look's conversation for one finding, within `max_input_tokens`."""
    finding_text, redactions = redact_text(_finding_text(finding), finding.path or "(finding)")
    found: list[Redaction] = list(redactions)
    if finding.path is None:
        head_text, base_text = "(the finding is about the change as a whole)", "(see above)"
        callers_text = "(none: the finding cites no code)"
    else:
        head, scope = head_excerpt(request.head, finding.path, finding.line, finding.end_line)
        base = base_excerpt(TreeReader(request.repo_root, request.target.merge_base),
                            request.target.file(finding.path), finding.path, finding.line, scope)
        callers = callers_excerpt(request, finding.path, finding.line)
        head_text, base_text, callers_text = head.text, base.text, callers.text
        found += [*head.redactions, *base.redactions, *callers.redactions]
    system = verification_system()
    room = (max_input_tokens - estimate_tokens(system) - estimate_tokens(finding_text)
            - PROMPT_MARGIN_TOKENS) * CHARACTERS_PER_TOKEN
    cut = "\n… (cut to fit the request budget)"
    base_text = truncate(base_text, max(200, room // 3), cut)
    callers_text = truncate(callers_text, max(200, room // 4), cut)
    head_text = truncate(head_text, max(200, room - len(base_text) - len(callers_text)), cut)
    nonce = hashlib.sha256("\0".join([finding_text, head_text, base_text, callers_text])
                           .encode("utf-8", "surrogateescape"))
    nonce_text = nonce.hexdigest()[:16]
    user = fill(template("verification-request.md"),
                {"nonce": nonce_text, "finding": finding_text, "head": head_text, "base": base_text,
                 "callers": callers_text})
    return Conversation(system, (Message("user", user),), tuple(found), answer_format(),
                        system_beside_schema=verification_system(schema_sent=True))


@dataclass
class Look:
    finding: Finding
    usage: list[Reply] = field(default_factory=list)
    judgement: Judgement | None = None
    failure: str | None = None
    redactions: tuple[Redaction, ...] = ()
    reused: bool = False  # answered from the cache: no request made
    failure_note: str | None = None  # the answer could not be stored (it still counts)


def _look(verifier: Verifier, request: ReviewRequest, finding: Finding, key: str | None,
          store: ChunkStore | None, identity: str, sharing: int = 1) -> Look:
    """One finding checked; from the cache when exactly this question was answered before (a
    push that leaves the finding's code alone pays for its second look once)."""
    conversation = replace(build_verification(request, finding, verifier.options.max_input_tokens),
                           prefix_requests=sharing)  # the other findings' looks read its prefix from the cache
    look = Look(finding, redactions=conversation.redactions)
    material = {"second_look": identity,
                "sent": text_digest("\0".join([conversation.system, *(item.text for item in conversation.messages)]))}
    answer_key = cache_key(material)
    stored = store.load(answer_key) if store is not None else None
    if stored is not None:
        try:
            look.judgement, look.reused = parse_judgement(stored.text, finding.severity), True
            return look
        except ContractError:
            pass  # an entry the contract no longer accepts is a miss
    try:
        with chunk_deadline(verifier.options.chunk_timeout):
            look.judgement, text = ask_with_repair(verifier.transport, conversation, key,
                                                   lambda answer: (parse_judgement(answer, finding.severity), answer), look.usage,
                                                   who="the second look")
    except AskFailed as error:
        look.failure = str(error)
        return look
    if store is not None:
        problem = store.save(answer_key, material, text, usage_of(look.usage, verifier.options))
        if problem is not None:
            look.failure_note = problem
    return look


def _judged(finding: Finding, judgement: Judgement, verifier: str) -> Finding:
    record: dict[str, Any] = {"verdict": judgement.verdict, "reason": judgement.reason, "verifier": verifier}
    if judgement.verdict == REFUTED:
        return finding.with_changes(
            dismissed=f"refuted on the second look ({verifier}): {judgement.reason}",
            extra={**finding.extra, "verification": record},
        )
    record["failure_scenario"] = judgement.failure_scenario or None
    if judgement.verdict == LOWER and judgement.severity is not None:
        record.update(reported_severity=finding.severity.value, severity=judgement.severity.value)
        body = (f"{finding.body}\n\nSecond look ({verifier}): holds, but as {judgement.severity.value}, not "
                f"{finding.severity.value}: {judgement.reason}")
        return finding.with_changes(severity=judgement.severity, body=body,
                                    extra={**finding.extra, "verification": record})
    body = f"{finding.body}\n\nSecond look ({verifier}): holds. Failure scenario: {judgement.failure_scenario}"
    return finding.with_changes(body=body, extra={**finding.extra, "verification": record})


def _describe_usage(usage: Usage) -> str:
    cost = f", cost {usage.cost:.4f}" if usage.cost is not None else ", no cost: no input_price/output_price"
    return (f"{usage.requests} request(s), {usage.input_tokens} input and {usage.output_tokens} output "
            f"tokens{cost}")


def take_second_look(
    reviewer: ReviewingModel, request: ReviewRequest, outcome: ReviewerOutcome, key: str | None, started: float,
    store: ChunkStore | None = None,
) -> ReviewerOutcome:
    """The outcome with every finding that could block checked: refuted ones dismissed, lowered
    ones at their lower severity with why, ones that hold carrying their failure scenario;
    blocked when a check could not be made."""
    policy = reviewer.second_look
    verifier = policy.verifier
    if verifier is None or outcome.status is not ReviewerStatus.OK:
        return outcome  # off, or the review itself failed: nothing it found is approved anyway
    candidates = [finding for finding in outcome.findings if needs_second_look(finding, policy.min_confidence)]
    if not candidates:
        return outcome
    if not policy.own and verifier.key_variable is not None:
        key = os.environ.get(verifier.key_variable) or None
        if key is None:
            reason = (f"the second look's reviewer {verifier.name!r} needs ${verifier.key_variable}, which is "
                      "not set: the findings that would block could not be checked")
            return outcome._replace(status=ReviewerStatus.BLOCKED, reason=reason)
    with ThreadPoolExecutor(max_workers=reviewer.options.concurrency) as pool:
        identity = text_digest(json.dumps(policy.identity(), sort_keys=True, default=str))
        looks = list(pool.map(lambda finding: _look(verifier, request, finding, key, store, identity,
                                                    len(candidates)), candidates))
    judged = {look.finding.id: _judged(look.finding, look.judgement, verifier.name)
              for look in looks if look.judgement is not None}
    findings = tuple(judged.get(finding.id, finding) for finding in outcome.findings)
    spent = usage_of([reply for look in looks for reply in look.usage], verifier.options)
    failures = [f"{look.finding.location} {look.finding.title!r}: {look.failure}" for look in looks if look.failure]
    verdicts = [look.judgement.verdict for look in looks if look.judgement is not None]
    refuted, lower = verdicts.count(REFUTED), verdicts.count(LOWER)
    note = (f"second look ({verifier.name}) at {len(looks)} finding(s) that could block: "
            f"{verdicts.count(HOLDS)} hold, {lower} hold at a lower severity (lowered, with why), "
            f"{refuted} refuted (dismissed, they do not block)"
            + (f", {len(failures)} not checked" if failures else "") + f"; {_describe_usage(spent)}"
            + (f"; {reused} answered from the cache" if (reused := sum(look.reused for look in looks)) else ""))
    redactions = [found.describe() for look in looks for found in look.redactions]
    stored = [look.failure_note for look in looks if look.failure_note]
    if not policy.own:  # the other reviewer's transport learned about its own server
        stored += verifier.transport.run_notes()
    if outcome.usage.cost is not None and spent.cost is None and spent.requests:
        stored.append(f"the cost is partial: it leaves out the second look's {spent.requests} request(s), "
                      f"as reviewer {verifier.name!r} has no input_price/output_price")
    elif outcome.usage.cost is None and spent.cost is not None and outcome.usage.requests:
        stored.append(f"the cost is partial: it leaves out the review's {outcome.usage.requests} request(s), "
                      f"as reviewer {reviewer.name!r} has no input_price/output_price")
    notes = (*outcome.notes, note, *dict.fromkeys(stored),
             *(item for item in dict.fromkeys(redactions) if item not in outcome.notes))
    status: ReviewerStatus = outcome.status
    reason = outcome.reason
    if failures:
        status = ReviewerStatus.BLOCKED
        reason = (f"the second look could not check {len(failures)} finding(s) that would block: {failures[0]}"
                  + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""))
    return outcome._replace(status=status, reason=reason, findings=findings,
                            usage=outcome.usage.plus(spent), notes=notes,
                            duration_seconds=time.monotonic() - started)
