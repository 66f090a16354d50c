"""`security/tls-verification-off`: certificate or host-name verification turned off, outside a
test file (a test of that path). Python's `verify=False` and `ssl._create_unverified_context()`;
`rejectUnauthorized: false`, `NODE_TLS_REJECT_UNAUTHORIZED=0`, `InsecureSkipVerify: true` and
Java's host-name verifiers that accept every host on an added line, unless the lines just above
test a database TLS mode whose name says it does not verify."""

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
    not_on=(
        "test files (a test of the TLS-off path); `rejectUnauthorized: false` within five added lines "
        "under a test of a database TLS mode whose name says it does not verify (libpq's `allow`, "
        "`prefer`, `require`, pg's `no-verify`: `case 'no-verify':`, `ssl === 'require' ? … :`): "
        "the user's explicit choice (pg 8.23.1 `lib/connection-parameters.js:35, 94`, postgres 4.2.0 "
        "`src/socket.js:22`); a mode that verifies (`verify-full`) or any other condition still fires"
    ),
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


# A database driver's TLS mode chosen by a name that says it does not verify (libpq's `sslmode`
# `allow`, `prefer`, `require`; pg's `no-verify`), tested on the lines just above the setting
# (`case 'no-verify':`, `ssl === 'require' ?`): the user's explicit choice, not the code's.
_NAMED_TLS_MODE = LazyPattern(
    r"(?:\bcase\s*|[=!]==?\s*)[\"'](?:allow|prefer|require|no-verify)[\"']"
)
# How many lines above the setting are read for the mode it answers.
_MODE_LINES_ABOVE = 5


def _line_evidence(text: str, start: int) -> str | None:
    if _NAMED_TLS_MODE.search(text, 0, start + len(text[start:].split("\n", 1)[0])):
        return None  # the user chose a mode that by its name does not verify the certificate
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
        lines_before=_MODE_LINES_ABOVE,
    ),
)
