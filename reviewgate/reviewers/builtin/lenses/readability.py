"""Comments that only make sense next to the diff, and commented-out code.

The rule: "A comment that narrates the change, cites a ticket, or describes code the branch
removed is major: the next reader has no diff." A comment that explains why stays quiet: the
patterns below look for the change's story (verbs of editing at the start, "as requested",
ticket keys), not for words like "change" anywhere. Naming is never flagged.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.comment_intent import explains_why
from reviewgate.reviewers.builtin.comments import Comment, added_comments
from reviewgate.reviewers.builtin.file_kinds import is_test_data
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.rule import Example, File, Rule
from reviewgate.text import UNPARSABLE

NARRATING_COMMENT = Rule(
    id="readability/narrating-comment",
    finding_class=FindingClass.READABILITY,
    severity=Severity.MAJOR,
    short="Comment tells the story of the edit",
    full=(
        "An added comment narrates the change (\"changed\", \"fixed the bug\", \"no longer needed\", \"per "
        "review\") instead of explaining the code. That history belongs in the commit message; the "
        "comment should say why."
    ),
    tags=("maintainability", "readability"),
    precision="high",
    fires_on=(
        "an added comment that tells the edit's story: starts with an editing verb (changed, renamed, "
        "moved, replaced, removed, refactored, reverted …), \"added this/the/a …\", \"fixed the bug …\", "
        "\"this fixes …\", \"no longer needed\", \"previously …\", \"used to …\", \"the old code …\", \"as "
        "requested/discussed\", \"per review\", \"after/from/addressing review feedback or comments\" — "
        "e.g. `# Fixed the bug from #412`"
    ),
    not_on=(
        "comments that explain why; words like \"change\" elsewhere in a sentence (\"Change the limit "
        "only together with …\"); \"Fixed-width …\"; tool pragmas (`noqa`, `type:`, `eslint`, `pylint`, "
        "`nolint`, `@ts-`); comments that already existed; review and PR comments as things code "
        "handles (\"GitHub calls them review comments\", \"one answer per review request\"); a comment "
        "that cites an issue (`#412`, `issue N`, `PAY-12`) and gives a reason in the same comment "
        "block (because, so that, `, so`, otherwise, to avoid, unless, when, if …): `# Fixed the bug "
        "in #412 because the proxy drops idle connections`"
    ),
    fires=(
        Example(
            file=File("app/retry.py", "python", """\
def retry_delay(attempt):
    \x23 Changed the delay to grow with each attempt
    return min(2 ** attempt, 60)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/retry.py", "python", """\
def retry_delay(attempt):
    \x23 Grow the delay with each attempt so a struggling server gets room to recover
    return min(2 ** attempt, 60)
"""),
        ),
    ),
)

TICKET_REFERENCE = Rule(
    id="readability/ticket-reference",
    finding_class=FindingClass.READABILITY,
    severity=Severity.MAJOR,
    short="Comment cites a ticket without a reason",
    full=(
        "An added comment names a ticket or issue (PAY-4821, GH-1234) and gives no reason. The reader "
        "needs the reason in the code; the ticket may move or close."
    ),
    tags=("maintainability", "readability"),
    precision="high",
    fires_on=(
        "a ticket key (`PAY-4821`, `JIRA-123`) or an issue, ticket, bug or PR number (\"issue #N\", "
        "\"ticket N\", \"bug #N\", \"PR N\") in an added comment that gives no reason: `# Fixes PAY-4821`, "
        "`// PAY-4821`"
    ),
    not_on=(
        "standard names shaped like keys (`UTF-8`, `SHA-256`, `ISO-8601`, `RFC-7231`, `CVE-…`, "
        "`TLS-…` …); anything inside a URL (`http://www.apache.org/licenses/LICENSE-2.0`, "
        "`…/browse/PAY-12`); a key followed by `.digit` (a version); licence and copyright lines "
        "(`Licensed under …`, `SPDX-License-Identifier`); a comment that explains why and cites the "
        "ticket for more (`# The proxy drops idle connections (PAY-412), so keep-alive stays "
        "shorter`)"
    ),
    fires=(
        Example(
            file=File("app/refunds.py", "python", """\
def refund_amount(order):
    \x23 PAY-4821
    return order.total
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/refunds.py", "python", """\
def refund_amount(order):
    \x23 The order total, not the amount paid, because coupons are refunded apart (PAY-4821)
    return order.total
"""),
        ),
    ),
)

COMMENTED_OUT_CODE = Rule(
    id="readability/commented-out-code",
    finding_class=FindingClass.READABILITY,
    severity=Severity.MINOR,
    short="Code left commented out",
    full=(
        "Three or more added comment lines that parse as code. Version control keeps old code; "
        "commented-out code goes stale and misleads."
    ),
    tags=("maintainability", "readability"),
    precision="high",
    fires_on=(
        "≥ 3 consecutive added whole-line comments that parse as Python (with `ast`) or look like "
        "C-like statements in ≥ 2/3 of the lines"
    ),
    not_on="prose; one- or two-line examples",
    fires=(
        Example(
            file=File("app/cart.py", "python", """\
def cart_total(items):
    \x23 for item in items:
    \x23     print(item.price)
    \x23 total = sum(item.price for item in items)
    return sum(item.price for item in items)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/cart.py", "python", """\
def cart_total(items):
    \x23 Prices are in cents, so the sum is exact; convert to a decimal
    \x23 amount only where it is shown, never before adding, or the
    \x23 rounding of each item adds up.
    return sum(item.price for item in items)
"""),
        ),
    ),
)

RULES = (NARRATING_COMMENT, TICKET_REFERENCE, COMMENTED_OUT_CODE)


RULE_NARRATION = NARRATING_COMMENT.id
RULE_TICKET = TICKET_REFERENCE.id
RULE_COMMENTED_CODE = COMMENTED_OUT_CODE.id

_NARRATION = LazyPattern(
    r"^(?:(?:note|nb)\s*:\s*)?(?:(?:i|we)\s+(?:have\s+)?)?"
    # The verb must act on something ("removed the check", "changed x to y"), so a comment that
    # uses the word as an adjective ("removed lines come first") is not read as narration.
    r"(?:(?:changed|renamed|moved|replaced|switched|swapped|refactored|reverted|removed|deleted|dropped)\s+"
    r"(?:the|this|that|these|those|a|an|it|them|old|unused|dead|\S+\s+(?:to|from|with|into|by))\b"
    r"|(?:added|adding|now)\s+(?:this|the|a|an|new)\b"
    r"|fix(?:ed|es)?\s+(?:for\s+)?(?:the\s+|a\s+)?(?:bug|issue|problem|crash|regression|error)\b"
    r"|this\s+(?:fixes|fix|change|commit|pr)\b"
    r"|no\s+longer\s+(?:needed|used|required|necessary)\b"
    r"|(?:previously|formerly|originally)\b"
    r"|used\s+to\s+(?:be|use|call|return)\b"
    r"|(?:the\s+)?old\s+(?:code|version|implementation|logic|way)\b)",
    re.IGNORECASE,
)
# Who asked for the edit: a request, a review or a discussion named as its source. The same words
# name things code handles (a forge client posts comments on reviews; a limit counts items for
# each review request): they count only after a verb or preposition that makes them the source,
# and never with a noun after them.
_REQUESTED = LazyPattern(
    r"\bas\s+(?:requested|discussed|suggested|agreed)\b"
    r"|\bper\s+(?:the\s+)?(?:code\s+)?(?:review|discussion|feedback)\b"
    r"(?!\s+(?:requests?|comments?|threads?|rounds?|runs?|batch(?:es)?|calls?|apps?|bots?)\b)"
    r"|\b(?:from|after|following|addressing|addressed|addresses|address|per|in)\s+(?:the\s+|a\s+)?"
    r"(?:code\s+)?(?:review|pr)\s+(?:feedback|comments?)\b"
    r"|\baddress(?:es|ed|ing)?\s+(?:the\s+)?review\b",
    re.IGNORECASE,
)
# A ticket key (project letters, a dash, a number) or the word issue/ticket/bug and a number.
# Standards and encodings shaped like keys (UTF-8, SHA-256, ISO-8601, RFC-7231) are not tickets.
# A key followed by `.digit` is a version (`LICENSE-2.0`), not a ticket.
_TICKET_KEY = LazyPattern(r"\b(?P<project>[A-Z][A-Z0-9]{1,9})-\d{1,6}\b(?!\.\d)")
_TICKET_WORDS = LazyPattern(r"\b(?:issue|ticket|bug|jira|pr|pull request|story)\s*#?\d+\b", re.IGNORECASE)
# A bare `#123` is an issue number too, but only counts with a why next to it (never reported).
_ISSUE_NUMBER = LazyPattern(r"(?<![\w&])#\d{1,6}\b")
_DIGIT = LazyPattern(r"\d")
# URLs carry path segments shaped like keys (`licenses/LICENSE-2.0`, `browse/PAY-12`) that the
# reader follows, and licence headers are boilerplate: neither is the change's story.
_URL = LazyPattern(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.IGNORECASE)
_LICENCE = LazyPattern(r"\blicen[cs]e[ds]?\b|\bSPDX-|\bcopyright\b|\(c\)\s*\d{4}", re.IGNORECASE)
_NOT_PROJECTS = frozenset(
    {
        "UTF",
        "SHA",
        "ISO",
        "RFC",
        "CVE",
        "AES",
        "TLS",
        "SSL",
        "HTTP",
        "IPV",
        "MD",
        "CP",
        "ECMA",
        "PEP",
        "ES",
        "EN",
        "RS",
        "HS",
        "PS",
        "ED",
        "X",
        "UCS",
        "ASCII",
        "BASE",
        "CRC",
        "GMT",
        "UTC",
        "TCP",
        "UDP",
        "RSA",
        "EC",
        "P",
        "CWE",
        "OWASP",
        "GPL",
        "LGPL",
        "AGPL",
        "BSD",
        "MIT",
        "APACHE",
    }
)
# At least this many consecutive commented lines that parse as code make a commented-out block
# (one line of code in a comment is usually an example, three are dead code).
MIN_COMMENTED_CODE_LINES = 3
_C_LIKE_CODE_LINE = LazyPattern(
    r"(?:[;{}]\s*$|^\s*(?:if|for|while|return|const|let|var|func|function|public|private|protected|import|"
    r"throw|try|catch|switch|case)\b.*[(){};=]|^[\w.$]+\s*(?:=|\+=|-=)\s*\S.*[;)]\s*$|^[\w.$]+\(.*\)\s*;?$)"
)


def ticket_reference(text: str) -> str | None:
    if _LICENCE.search(text):
        return None
    text = _URL.sub(" ", text)
    for match in _TICKET_KEY.finditer(text):
        if match.group("project") not in _NOT_PROJECTS:
            return match.group(0)
    words = _TICKET_WORDS.search(text)
    return words.group(0) if words else None


def _looks_like_python(block: list[str]) -> bool:
    import textwrap  # only for a block of commented-out lines: its patterns compile at import

    try:
        tree = ast.parse(textwrap.dedent("\n".join(block)))
    except UNPARSABLE:
        return False
    # Prose that happens to parse is a bare name or constant per line; code does something.
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Constant)))
        for node in tree.body
    )


def _looks_like_c_like(block: list[str]) -> bool:
    code_lines = sum(1 for line in block if _C_LIKE_CODE_LINE.search(line.strip()))
    return code_lines * 3 >= len(block) * 2


def _whole_line_runs(comments: list[Comment]) -> list[list[Comment]]:
    """Consecutive whole-line comments: one block of prose or of commented-out code."""
    blocks: list[list[Comment]] = []
    for comment in comments:
        if not comment.whole_line:
            continue
        if blocks and blocks[-1][-1].line == comment.line - 1:
            blocks[-1].append(comment)
        else:
            blocks.append([comment])
    return blocks


def _comment_blocks(comments: list[Comment]) -> dict[int, str]:
    """The whole text of the comment block each line belongs to: a reason often sits on the
    line after the one that cites the issue."""
    texts: dict[int, str] = {}
    for block in _whole_line_runs(comments):
        joined = " ".join(item.text for item in block)
        texts.update((item.line, joined) for item in block)
    return texts


class ReadabilityLens:
    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            if is_test_data(change.path):
                continue  # comment-shaped lines in test data are the data under test
            comments = added_comments(change)
            blocks = _comment_blocks(comments)
            for comment in comments:
                finding = self._narration(change.path, comment, blocks.get(comment.line, comment.text))
                if finding is not None:
                    yield finding
            yield from self._commented_out_code(change, comments)

    def _narration(self, path: str, comment: Comment, block: str) -> Finding | None:
        text = comment.text
        if text.lower().startswith(("reviewgate:", "noqa", "type:", "eslint", "pylint", "nolint", "@ts-")):
            return None
        # A ticket key, a ticket word's number and an issue number all hold a digit: most comments
        # have none and skip the four patterns (a 100,000-line change adds some 18,000 comments).
        numbered = _DIGIT.search(text) is not None
        ticket = ticket_reference(text) if numbered else None
        if numbered and (ticket is not None or _ISSUE_NUMBER.search(text)) and explains_why(block):
            return None  # the reason is what the reader needs; the issue is where to read more
        if ticket is not None:
            title, rule = f"Comment cites a ticket ({ticket})", RULE_TICKET
            why = "The ticket is history: say in the comment what the code needs the reader to know."
        elif _NARRATION.search(text) or _REQUESTED.search(text):
            title, rule = "Comment narrates the change", RULE_NARRATION
            why = (
                "It tells the story of the edit (what changed, what was removed, who asked), which the next "
                "reader, who has no diff, cannot use. Say why the code is as it is, or delete the comment."
            )
        else:
            return None
        return lens_finding(
            rule=rule,
            category="readability",
            finding_class=FindingClass.READABILITY,
            severity=Severity.MAJOR,
            title=title,
            body=f"A comment that narrates the change or cites a ticket is major. {why}",
            path=path,
            line=comment.line,
            code=text,
        )

    def _commented_out_code(self, change: FileChange, comments: list[Comment]) -> Iterator[Finding]:
        language = language_of(change.path)
        for block in _whole_line_runs(comments):
            if len(block) < MIN_COMMENTED_CODE_LINES:
                continue
            texts = [item.text for item in block]
            if language is Language.PYTHON:
                # Python needs the indentation the comment text was stripped of: take what follows `# `.
                added = change.added_lines()
                raw = [added[item.line].split("#", 1)[1].removeprefix(" ") for item in block]
                is_code = _looks_like_python(raw)
            else:
                is_code = _looks_like_c_like(texts)
            if not is_code:
                continue
            yield lens_finding(
                rule=RULE_COMMENTED_CODE,
                category="readability",
                finding_class=FindingClass.READABILITY,
                severity=Severity.MINOR,
                title=f"{len(block)} lines of commented-out code",
                body="Dead code in comments rots: delete it (version control keeps it) or make it live code.",
                path=change.path,
                line=block[0].line,
                end_line=block[-1].line,
                code=texts[0],
            )

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (ReadabilityLens(),)
