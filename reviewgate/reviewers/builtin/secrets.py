"""Committed secrets in added lines, any text file (seed 000 item 6: "a secret in a log").

A secret that reached the repository is leaked whatever happens to the branch, so it is a blocker.
Look-alikes that must not fire: documented example keys, placeholders, and key-shaped strings in
test fixtures named as such (a fixture directory, a data file among the tests, or a line in a test
saying fake/dummy/example/test). A key in test code without such a name still fires: suppress it
with a reason if it is a test of the detector itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.common import (
    is_test_data,
    is_test_file,
    lens_finding,
    reviewable_changes,
)
from reviewgate.secret_formats import TOKEN_PATTERNS

RULE_SECRET = "security/committed-secret"

_SECRET_ASSIGNMENT = re.compile(
    r"""(?P<name>[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"""
    r"""client[_-]?secret)[\w.-]*)["']?\s*(?::=|=|:)\s*[bru]?(?P<quote>["'])(?P<value>[^"'\s]{12,})(?P=quote)""",
    re.IGNORECASE,
)
# Literal parts that every token pattern (first) and every secret name of `_SECRET_ASSIGNMENT`
# (second, with the same IGNORECASE) contains: a line without them cannot match, and most added
# lines have none. The patterns themselves, `_SECRET_ASSIGNMENT` with its leading `[\w.-]*` above
# all, cost far more per line.
_MAY_HOLD_A_TOKEN = re.compile(
    r"PRIVATE KEY|AKIA|ASIA|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt)-|xox[abposr]-|AIza|k_live_|sk-|npm_"
)
_MAY_NAME_A_SECRET = re.compile(r"passw|pwd|secret|token|key", re.IGNORECASE)
_NOT_A_SECRET_NAME = re.compile(
    r"fake|dummy|example|sample|placeholder|test|mock|stub|fixture", re.IGNORECASE
)
# Names that hold where a secret lives or what it is called, not the secret itself.
_DESCRIBES_A_SECRET = re.compile(
    r"[_.-]?(?:env|var|name|url|uri|path|file|header|field|type|prefix|length|id|kind|format|pattern|regex)$",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"://|^/|\$\{|\{\{|<[\w-]+>|%\(|^\$|changeme|change_me|xxxx|\*\*\*\*|your[_-]|example", re.IGNORECASE
)
# Shannon entropy per character above which a quoted value looks random rather than a word
# (English text sits near 3-4 bits; base64 and hex keys of this length above 4).
MIN_ENTROPY_BITS = 3.5


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(count / len(value) * math.log2(count / len(value)) for count in counts.values())


def _named_as_fixture(path: str, line: str) -> bool:
    return is_test_data(path) or (is_test_file(path) and bool(_NOT_A_SECRET_NAME.search(line)))


class SecretsLens:
    rule = RULE_SECRET

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            for number, line in sorted(change.added_lines().items()):
                kind = self._secret_in(line)
                if kind is None or _named_as_fixture(change.path, line):
                    continue
                yield lens_finding(
                    rule=self.rule,
                    category="security",
                    finding_class=FindingClass.CORRECTNESS,
                    severity=Severity.BLOCKER,
                    title=f"Committed secret ({kind})",
                    body=(
                        f"This line adds what looks like a {kind}. Once pushed it is in the history for "
                        "good: revoke it, rotate it, and read it from the environment or a secret store."
                    ),
                    path=change.path,
                    line=number,
                    code=line,
                )

    def _secret_in(self, line: str) -> str | None:
        if _MAY_HOLD_A_TOKEN.search(line) is None:
            return self._secret_assigned(line)
        for kind, pattern in TOKEN_PATTERNS:
            match = pattern.search(line)
            if match and "EXAMPLE" not in match.group(0):  # AWS's documented example keys end in EXAMPLE
                return kind
        return self._secret_assigned(line)

    def _secret_assigned(self, line: str) -> str | None:
        if _MAY_NAME_A_SECRET.search(line) is None:
            return None
        for match in _SECRET_ASSIGNMENT.finditer(line):
            value = match.group("value")
            name = match.group("name")
            if (
                _NOT_A_SECRET_NAME.search(name)
                or _DESCRIBES_A_SECRET.search(name)
                or _PLACEHOLDER.search(value)
            ):
                continue
            if entropy(value) >= MIN_ENTROPY_BITS:
                return f"high-entropy value assigned to `{match.group('name')}`"
        return None
