"""The review contract: find the JSON a model returned, normalize what is unambiguous, validate
strictly against `schemas/review-contract.schema.json`.

"Parse strictly against the schema; tolerate a fenced block or leading prose";
"Unknown class/severity values: normalized when unambiguous, else the finding is dropped
and counted."
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema

from reviewgate.findings import FindingClass, Severity
from reviewgate.text import printable

SCHEMA_RESOURCE = "review-contract.schema.json"

# Spellings models use for our classes and severities. Only mappings with one reading are here:
# "low" or "warning" could be minor or nit, so they are not, and such a finding is dropped.
CLASS_SYNONYMS = {
    "systemic": FindingClass.SYSTEMATIC,
    "product-question": FindingClass.PRODUCT_QUESTION,
    "product question": FindingClass.PRODUCT_QUESTION,
    "productquestion": FindingClass.PRODUCT_QUESTION,
    "question": FindingClass.PRODUCT_QUESTION,
    "bug": FindingClass.CORRECTNESS,
    "style": FindingClass.READABILITY,
}
SEVERITY_SYNONYMS = {
    "critical": Severity.BLOCKER,
    "blocking": Severity.BLOCKER,
    "high": Severity.MAJOR,
    "medium": Severity.MINOR,
    "moderate": Severity.MINOR,
    "trivial": Severity.NIT,
    "nitpick": Severity.NIT,
}

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n?```", re.DOTALL)


class ContractError(Exception):
    """The reply is not a valid review; the message is what a repair request tells the model."""


@dataclass(frozen=True)
class ParsedReview:
    verdict: str
    summary: str
    findings: tuple[dict[str, Any], ...]
    product_questions: tuple[str, ...]
    dropped: int = 0
    drop_reasons: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)  # what was mended in fields that decide nothing


# Keys a finding may leave out (answers from before they existed, servers without strict
# output): absent reads as "not said".
OPTIONAL_FINDING_KEYS = ("confidence", "suggestion")


@lru_cache(maxsize=4)
def packaged_schema(resource: str) -> dict[str, Any]:
    """A published schema, loaded from the package (it ships as package data)."""
    text = (resources.files("reviewgate") / "schemas" / resource).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def contract_schema() -> dict[str, Any]:
    return packaged_schema(SCHEMA_RESOURCE)


def wire_form(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema as sent to an API: without the meta keys some structured-output modes reject."""
    return {key: value for key, value in schema.items() if not key.startswith("$") and key != "title"}


def _without_descriptions(schema: Any) -> Any:
    """A schema with its `description` texts left out: the system message says what each field is."""
    if isinstance(schema, dict):
        return {key: _without_descriptions(value) for key, value in schema.items() if key != "description"}
    if isinstance(schema, list):
        return [_without_descriptions(value) for value in schema]
    return schema


def wire_schema() -> dict[str, Any]:
    """The review contract as sent with every request (response_format, tool): no descriptions,
    a repeated cost of every request that tells the model nothing the system message does not."""
    schema: dict[str, Any] = _without_descriptions(wire_form(contract_schema()))
    return schema


def schema_shape(schema: dict[str, Any]) -> str:
    """A schema as one compact line for the system message: `{"key":type,...}`, enums as
    `"a"|"b"`, `|null` where null is allowed. The answer is still validated against the schema."""
    if "enum" in schema:
        return "|".join(json.dumps(value) for value in schema["enum"])
    types = schema.get("type")
    kinds = types if isinstance(types, list) else [types]
    shown: list[str] = []
    for kind in kinds:
        if kind == "object":
            fields = schema.get("properties", {})
            shown.append("{" + ",".join(f"{json.dumps(name)}:{schema_shape(value)}" for name, value in fields.items())
                         + "}")
        elif kind == "array":
            shown.append(f"[{schema_shape(schema.get('items', {}))}]")
        else:
            shown.append(str(kind))
    return "|".join(shown)


def _candidates(text: str) -> list[str]:
    """Where the JSON object may be: the whole text, each fenced block, the outermost braces."""
    stripped = text.strip()
    found = [stripped]
    found += [match.group(1).strip() for match in _FENCE.finditer(text)]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        found.append(stripped[start : end + 1])
    return found


def extract_json(text: str) -> Any:
    """The first candidate that parses; a ContractError carrying the JSON error otherwise."""
    if not text.strip():
        raise ContractError("the reply was empty; expected one JSON object")
    first_error: json.JSONDecodeError | None = None
    for candidate in _candidates(text):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as error:
            first_error = first_error or error
    assert first_error is not None
    raise ContractError(
        f"the reply is not valid JSON: {first_error.msg} "
        f"at line {first_error.lineno} column {first_error.colno}"
    )


def _normalize(
    value: Any, enum_type: type[FindingClass] | type[Severity], synonyms: dict[str, Any]
) -> str | None:
    if not isinstance(value, str):
        return None
    key = value.strip().lower().replace("_", " ")
    for member in enum_type:
        if key == member.value.replace("_", " "):
            return str(member.value)
    mapped = synonyms.get(key) or synonyms.get(key.replace(" ", "-"))
    return None if mapped is None else str(mapped.value)


def _normalize_findings(document: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """Findings with class and severity spelled our way; those that cannot be are dropped."""
    kept: list[Any] = []
    reasons: list[str] = []
    for item in document.get("findings", []):
        if not isinstance(item, dict) or "class" not in item or "severity" not in item:
            kept.append(item)  # structural problems are the schema's to report
            continue
        item = {**{key: None for key in OPTIONAL_FINDING_KEYS}, **item}
        finding_class = _normalize(item["class"], FindingClass, CLASS_SYNONYMS)
        severity = _normalize(item["severity"], Severity, SEVERITY_SYNONYMS)
        if finding_class is None or severity is None:
            reasons.append(f"unknown class/severity {item['class']!r}/{item['severity']!r}")
            continue
        kept.append({**item, "class": finding_class, "severity": severity})
    return kept, reasons


def _describe(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    return f"{where}: {error.message}"


def check_schema(document: Any, schema: dict[str, Any], what: str) -> None:
    """A ContractError listing (up to five of) the ways `document` breaks `schema`."""
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=str)
    if errors:
        listed = "; ".join(_describe(error) for error in errors[:5])
        raise ContractError(f"the reply does not match the {what} schema: {listed}")


def _set_suggestions_aside(findings: list[Any]) -> tuple[list[Any], list[Any]]:
    """The findings with their suggestions taken out, and the suggestions: an optional extra
    whose wrong shape should cost the suggestion (dropped with a note), not the whole review."""
    aside = [item.get("suggestion") if isinstance(item, dict) else None for item in findings]
    return [{**item, "suggestion": None} if isinstance(item, dict) else item for item in findings], aside


def _suggestion_shape(raw: Any) -> Any:
    """The suggestion when it has the contract's shape; else `{"problem": ...}` saying why not."""
    if raw is None:
        return None
    schema = contract_schema()["properties"]["findings"]["items"]["properties"]["suggestion"]
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(raw), key=str)
    if not errors:
        return raw
    return {"problem": "it does not match the contract: " + "; ".join(_describe(error) for error in errors[:3])}


def _mend_confidence(findings: list[Any]) -> tuple[list[Any], list[str]]:
    """`confidence` decides no verdict by itself: a number above 1 (a grammar allows 2.08) is
    clamped to 1; a negative one or one that is not a number reads as not said (never as 0,
    which would dismiss a finding on garbage); each is noted. Only dicts are touched: a
    finding's structure is the schema's to judge."""
    mended: list[Any] = []
    notes: list[str] = []
    for index, item in enumerate(findings):
        value = item.get("confidence") if isinstance(item, dict) else None
        if value is None:
            mended.append(item)
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            notes.append(f"finding {index + 1}: confidence {printable(repr(value))[:40]} is not a number "
                         "from 0 to 1; read as not said")
            item = {**item, "confidence": None}
        elif value > 1:
            notes.append(f"finding {index + 1}: confidence {value:g} is above 1; read as 1")
            item = {**item, "confidence": 1.0}
        mended.append(item)
    return mended, notes


def parse_review(text: str) -> ParsedReview:
    """A validated review from a model's reply, or a ContractError saying what is wrong."""
    document = extract_json(text)
    if not isinstance(document, dict):
        raise ContractError(f"expected one JSON object, got {type(document).__name__}")
    reasons: list[str] = []
    suggestions: list[Any] = []
    notes: list[str] = []
    if isinstance(document.get("findings"), list):
        findings, reasons = _normalize_findings(document)
        findings, notes = _mend_confidence(findings)
        findings, suggestions = _set_suggestions_aside(findings)
        document = {**document, "findings": findings}
    questions = document.get("product_questions")
    if isinstance(questions, list):  # an empty question is no question (not an empty bullet)
        document = {**document, "product_questions": [item for item in questions
                                                      if not (isinstance(item, str) and not item.strip())]}
    if isinstance(document.get("verdict"), str):
        document["verdict"] = document["verdict"].strip().lower().replace(" ", "_")
    check_schema(document, contract_schema(), "review")
    return ParsedReview(
        verdict=document["verdict"],
        summary=document["summary"],
        findings=tuple({**item, "suggestion": _suggestion_shape(raw)}
                       for item, raw in zip(document["findings"], suggestions, strict=True)),
        product_questions=tuple(item.strip() for item in document["product_questions"]),
        dropped=len(reasons),
        drop_reasons=tuple(reasons),
        notes=tuple(notes),
    )
