"""The review contract and finding placement: pure decisions, tested without a model."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reviewgate.reviewers.model.contract import ContractError, contract_schema, parse_review
from reviewgate.reviewers.model.placement import place_all
from reviewgate.reviewers.model.redaction import redact_line
from reviewgate.reviewers.model.withheld import withheld_reason
from testing.model_repo import calc_repo, review_request
from testing.model_server import finding, review_document


def test_the_published_schema_is_valid_and_accepts_a_review() -> None:
    jsonschema.Draft202012Validator.check_schema(contract_schema())
    jsonschema.validate(review_document([finding("a.py", 1)]), contract_schema())


@pytest.mark.parametrize(
    "wrap",
    [
        lambda text: text,
        lambda text: f"```json\n{text}\n```",
        lambda text: f"Here is my review.\n\n```\n{text}\n```\nLet me know.",
        lambda text: f"My verdict follows: {text}",
    ],
)
def test_fenced_and_prose_wrapped_json_parse(wrap) -> None:  # type: ignore[no-untyped-def]
    parsed = parse_review(wrap(json.dumps(review_document([finding("a.py", 1)]))))
    assert parsed.verdict == "approve" and len(parsed.findings) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ('{"verdict": "approve", "summary": "x"', "not valid JSON"),
        ("[1, 2]", "expected one JSON object"),
        (json.dumps({"verdict": "maybe", "summary": "", "findings": [], "product_questions": []}), "verdict"),
        (json.dumps({"verdict": "approve", "summary": "", "findings": []}), "product_questions"),
        (json.dumps(review_document([{**finding("a.py", "7"), "extra": 1}])), "findings/0"),
    ],
)
def test_invalid_replies_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        parse_review(text)


def test_unambiguous_spellings_are_normalized_and_the_rest_dropped() -> None:
    findings = [
        finding("a.py", 1, finding_class="Correctness", severity="Critical"),
        finding("a.py", 2, finding_class="product question", severity="nit"),
        finding("a.py", 3, finding_class="correctness", severity="low"),  # minor or nit? ambiguous
        finding("a.py", 4, finding_class="vibes", severity="major"),
    ]
    parsed = parse_review(json.dumps(review_document(findings, verdict="Request Changes")))
    assert parsed.verdict == "request_changes"
    assert [(item["class"], item["severity"]) for item in parsed.findings] == [
        ("correctness", "blocker"),
        ("product_question", "nit"),
    ]
    assert parsed.dropped == 2


def test_placement_keeps_moves_and_drops(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    request = review_request(repo.path)
    items = [
        finding("app/calc.py", 7, end_line=9, title="exact"),
        finding("b/app/calc.py", 2, title="prefixed, on context line 2, moves to 3"),
        finding("app/calc.py", 20, title="far from changed lines, file level"),
        finding("app\\calc.py", 7, title="backslash"),
        finding("app/./calc.py", 7, title="not normal"),
        finding("app/util.py", 1, title="not a reuse finding"),
        finding(None, None, title="the change as a whole"),
    ]
    placement = place_all("llm", request.target, request.head, items)
    placed = {item.title: (item.path, item.line, item.end_line) for item in placement.findings}
    assert placed == {
        "exact": ("app/calc.py", 7, None),  # end_line past the hunk is dropped, not invented
        "prefixed, on context line 2, moves to 3": ("app/calc.py", 3, None),
        "far from changed lines, file level": ("app/calc.py", None, None),
        "the change as a whole": (None, None, None),
    }
    assert len(placement.dropped) == 3 and placement.moved == 2


def test_finding_ids_are_stable_across_line_moves(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    request = review_request(repo.path)
    first = place_all(
        "llm", request.target, request.head, [finding("app/calc.py", 7, title="Divide  by ZERO")]
    )
    second = place_all(
        "llm", request.target, request.head, [finding("app/calc.py", 8, title="divide by zero")]
    )
    assert first.findings[0].id == second.findings[0].id


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # reviewgate: ignore[security/committed-secret] input of the redaction test, not a credential
        ('key = "AKIAABCDEFGHIJKLMNOP"', "AWS access key id"),
        ("Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwx", "OpenAI-style key"),
        # reviewgate: ignore[security/committed-secret] input of the redaction test, not a key
        ("-----BEGIN RSA PRIVATE KEY-----", "private key block"),
        ('db_password = "correct-horse-battery"', "secret assignment"),
    ],
)
def test_secret_looking_values_are_redacted(line: str, kind: str) -> None:
    redacted, kinds = redact_line(line)
    assert kinds == [kind]
    assert "[REDACTED" in redacted


def test_ordinary_code_is_not_redacted() -> None:
    assert redact_line('token = request.headers.get("token")') == ('token = request.headers.get("token")', [])


@pytest.mark.parametrize(
    ("path", "withheld"),
    [
        ("docs/specs/x.md", True),
        ("services/api/docs/specs/x.md", True),
        ("docs/plans/new.md", True),  # the branch edits it
        ("docs/plans/old.md", False),  # predates the branch: fair game
        ("incidents/RCA-2024-01.md", True),
        ("docs/postmortem.md", True),
        ("src/arcade.py", False),
    ],
)
def test_withheld_paths(path: str, withheld: bool) -> None:
    assert (
        withheld_reason(path, {"docs/plans/new.md", path if path != "docs/plans/old.md" else ""}) is not None
    ) is withheld
