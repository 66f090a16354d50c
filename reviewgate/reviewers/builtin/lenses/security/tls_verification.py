"""`security/tls-verification-off`: certificate or host-name verification turned off, outside a
test file (a test of that path). Python's `verify=False` and `ssl._create_unverified_context()`;
`rejectUnauthorized: false`, `NODE_TLS_REJECT_UNAUTHORIZED=0`, `InsecureSkipVerify: true` and
Java's host-name verifiers that accept every host on an added line."""

from __future__ import annotations

import ast

from reviewgate.findings import FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.lenses.security.line_rules import LineRule
from reviewgate.reviewers.builtin.lenses.security.python_calls import PythonModule, is_constant, keyword
from reviewgate.reviewers.builtin.rule import Example, File, Rule

TLS_VERIFICATION_OFF = Rule(
    id="security/tls-verification-off",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="TLS certificate verification turned off",
    full=(
        "Certificate or host-name verification is disabled (`verify=False`, `rejectUnauthorized: "
        "false`, `InsecureSkipVerify: true`): anyone on the network path can read and change the "
        "traffic."
    ),
    tags=("security", "correctness", "external/cwe/cwe-295"),
    precision="high",
    fires_on=(
        "`verify=False`, `ssl._create_unverified_context()`, `rejectUnauthorized: false`, "
        "`NODE_TLS_REJECT_UNAUTHORIZED=0`, `InsecureSkipVerify: true`, `NoopHostnameVerifier`"
    ),
    not_on="test files (a test of the TLS-off path)",
    fires=(
        Example(
            file=File("app/client.py", "python", """\
import requests


def fetch(url):
    return requests.get(url, verify=False, timeout=10)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("tests/test_client.py", "python", """\
import requests


def test_fetch_without_verification(server):
    assert requests.get(server.url, verify=False, timeout=10).ok
"""),
            caption="In a test file (a test of the TLS-off path).",
        ),
    ),
)
RULE_TLS = TLS_VERIFICATION_OFF.id

_UNVERIFIED_CONTEXT = "ssl._create_unverified_context"
# The last part of every name check_call looks for by name (`verify=False` is a keyword of any call).
CALL_LEAVES = frozenset({_UNVERIFIED_CONTEXT.rsplit(".", 1)[-1]})


def check_call(module: PythonModule, call: ast.Call, name: str, leaf: str, first: ast.expr | None) -> tuple[str, str, str] | None:
    """(rule, what, evidence) when the call turns certificate verification off outside a test."""
    if not module.in_test and is_constant(keyword(call, "verify"), False):
        return (
            RULE_TLS,
            f"`{name}(..., verify=False)` turns TLS certificate verification off",
            "`verify=False` is a literal, outside a test file",
        )
    if not module.in_test and name == _UNVERIFIED_CONTEXT:
        return (
            RULE_TLS,
            "`ssl._create_unverified_context()` turns TLS certificate verification off",
            "it is outside a test file",
        )
    return None


def _line_evidence(text: str, start: int) -> str | None:
    return "the setting is a literal, outside a test file"


LINE_RULES = (
    LineRule(
        RULE_TLS,
        LazyPattern(
            r"rejectUnauthorized\s*:\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*[\"']?0"
            r"|InsecureSkipVerify\s*:\s*true|NoopHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER"
        ),
        "TLS certificate verification is turned off",
        _line_evidence,
        skip_in_tests=True,
    ),
)
