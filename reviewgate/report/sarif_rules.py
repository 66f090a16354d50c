"""SARIF rule descriptors (`reportingDescriptor`) for code scanning, in fixed words: a builtin rule's
from its declaration (reviewers/builtin/rules.py, the registry) with its first examples as help;
any other rule (a model reviewer's, an imported analyzer's, the verify's, the policy's) a generic
one for its kind. Never a finding's text: code scanning shows a rule's descriptions beside every
result of it.

The text fields are plain text (code scanning shows them as written; `help.markdown` is rendered).
GitHub ("SARIF support for code scanning"): `shortDescription.text`, `fullDescription.text` and
`help.text` are required, descriptions at most 1,024 characters, `help.markdown` shown instead of
the text where present; `properties.tags` filter results (`security` marks a security rule, which
`properties.security-severity`, "0.0" to "10.0", ranks: over 9.0 critical, 7.0 to 8.9 high, 4.0
to 6.9 medium, 0.1 to 3.9 low); `properties.precision` orders them.
"""

from __future__ import annotations

import re
from typing import Any

from reviewgate import __version__
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.report.plain_text import markdown_to_plain
from reviewgate.reviewers.builtin.rule import Rule
from reviewgate.reviewers.builtin.rules import RULES_BY_ID
from reviewgate.text import truncate

MAX_DESCRIPTION_CHARS = 1024  # GitHub: shortDescription and fullDescription
DOCS_ADDRESS = "https://github.com/reviewgate/reviewgate/blob/v{version}/docs/rules.md"
# security-severity by the severity a security rule usually reports at (its findings' own
# severity decides each result's level): a blocker is critical, a major high, a minor medium.
SECURITY_SEVERITY = {Severity.BLOCKER: "9.0", Severity.MAJOR: "7.0", Severity.MINOR: "4.0", Severity.NIT: "1.0"}


def docs_anchor(rule_id: str) -> str:
    """The anchor GitHub gives docs/rules.md's heading "## `reuse/duplicate-code`": the text in
    lower case without its punctuation but `-` (tests/test_sarif_output.py checks each exists)."""
    return "".join(char for char in rule_id.lower() if char.isalnum() or char in "-_")


def help_address(rule_id: str) -> str:
    return f"{DOCS_ADDRESS.format(version=__version__)}#{docs_anchor(rule_id)}"


def _fence(code: str) -> str:
    """A fence longer than any run of backticks in the code, so nothing in it closes the block."""
    return "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))


def _help(rule_id: str, doc: Rule) -> dict[str, str]:
    """The full description, then the first example that fires the rule and the first that does
    not: as text, and as Markdown with fenced code."""
    text, markdown = [markdown_to_plain(doc.full)], [doc.full]
    for heading_word, examples in (("Reported", doc.fires), ("Not reported", doc.does_not_fire)):
        example = examples[0].file
        heading = f"{heading_word} ({example.path}):"
        code = example.code.rstrip("\n")
        fence = _fence(code)
        text += ["", heading, "", code]
        markdown += ["", f"**{heading}**", "", f"{fence}{example.language}", code, fence]
    text += ["", f"More, with what the rule does not fire on: {help_address(rule_id)}"]
    markdown += ["", f"[More in docs/rules.md]({help_address(rule_id)}), with what the rule does not fire on."]
    return {"text": "\n".join(text), "markdown": "\n".join(markdown)}


def _builtin_descriptor(rule_id: str, doc: Rule, finding_class: str) -> dict[str, Any]:
    properties: dict[str, Any] = {"tags": list(dict.fromkeys((*doc.tags, finding_class))),
                                  "precision": doc.precision}
    if "security" in doc.tags:
        properties["security-severity"] = SECURITY_SEVERITY[doc.reported_severity]
    return {
        "id": rule_id,
        "name": rule_id,
        "shortDescription": {"text": markdown_to_plain(doc.short)},
        "fullDescription": {"text": truncate(markdown_to_plain(doc.full), MAX_DESCRIPTION_CHARS, "…")},
        "help": _help(rule_id, doc),
        "helpUri": help_address(rule_id),
        "properties": properties,
    }


# The kinds of rule that have no registry entry, by what reported them, in fixed words.
_MODEL_CLASSES = {
    FindingClass.CORRECTNESS: "a correctness problem",
    FindingClass.SYSTEMATIC: "a problem in how the code is built (repetition, structure)",
    FindingClass.READABILITY: "a readability problem",
    FindingClass.PRODUCT_QUESTION: "a question for the product owner",
}
_GENERIC_HELP = ("Each result's message says what was found and what to do. reviewgate's reviewers, the review policy "
                 "and how a finding is answered: https://github.com/reviewgate/reviewgate/blob/v{version}/docs/reviewers.md")


def _generic(rule_id: str, short: str, full: str, tags: tuple[str, ...], precision: str) -> dict[str, Any]:
    help_text = f"{full}\n\n{_GENERIC_HELP.format(version=__version__)}"
    return {
        "id": rule_id,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help_text, "markdown": help_text},
        "properties": {"tags": list(tags), "precision": precision},
    }


def rule_descriptor(rule_id: str, finding: Finding) -> dict[str, Any]:
    """The descriptor of `rule_id`, the rule of `finding` (the first result of it): the registry's
    words for a builtin rule, else the words for the kind of reviewer that reported it."""
    doc = RULES_BY_ID.get(rule_id)
    if doc is not None:
        return _builtin_descriptor(rule_id, doc, finding.finding_class.value)
    kind = finding.finding_class.value
    if finding.category == "imported":
        return _generic(rule_id, "A result imported from another analyzer's SARIF",
                        "A result another analyzer reported, imported with --import-sarif and judged by reviewgate's "
                        "policy like its own findings. The analyzer's own documentation describes the rule.",
                        ("imported", kind), "medium")
    if rule_id.startswith("model/"):
        return _generic(rule_id, f"A model reviewer's finding: {_MODEL_CLASSES[finding.finding_class]}",
                        f"A model reviewer reported {_MODEL_CLASSES[finding.finding_class]} in the change. Model "
                        "findings can be wrong: each result's message gives the evidence.", ("model", kind), "medium")
    if rule_id.startswith("verify-"):
        return _generic(rule_id, "A step of the app's own verify failed",
                        "A step of the verify manifest (the app's own build, tests or reproduction) failed against "
                        "this change; the result's message names the step and quotes the end of its log.",
                        ("verify", kind), "very-high")
    if rule_id.startswith("policy/"):
        return _generic(rule_id, "The change edits the review policy",
                        "The change edits reviewgate's own configuration: it takes effect after merge, and the "
                        "result's message names what would change.", ("policy", kind), "very-high")
    return _generic(rule_id, "A reviewgate finding", "A finding of one of reviewgate's reviewers.", (kind,), "medium")
