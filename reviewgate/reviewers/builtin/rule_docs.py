"""What each builtin rule is, in fixed words: the short and full description, the tags, how often
its findings are right, and the severity it usually reports at. SARIF's rule descriptors are
built from this (report/sarif_rules.py), never from a finding's text; each rule's examples come
from docs/lenses.md (rule_examples.json, which tests/test_sarif_output.py keeps in step with it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reviewgate.findings import Severity

EXAMPLES_FILE = Path(__file__).with_name("rule_examples.json")


@dataclass(frozen=True)
class RuleDoc:
    """A rule's documentation as code scanning shows it: short and full text, tags, precision, usual severity."""

    short: str  # one line, what code scanning shows next to each result
    full: str  # what fires it and why it matters
    tags: tuple[str, ...]  # code scanning filters on them; `security` marks a security rule
    precision: str  # very-high | high | medium | low (SARIF `properties.precision`)
    severity: Severity  # the severity its findings usually have


_MAJOR, _MINOR, _BLOCKER = Severity.MAJOR, Severity.MINOR, Severity.BLOCKER
_REUSE = ("maintainability", "duplication")
_READABILITY = ("maintainability", "readability")
_TESTS = ("correctness", "testing")
_CORRECTNESS = ("correctness", "reliability", "error-handling")
_PROCESS = ("process",)
_SUPPRESSION = ("maintainability", "suppression")

RULE_DOCS: dict[str, RuleDoc] = {
    "reuse/duplicate-code": RuleDoc(
        "Added code repeats code that already exists",
        "Added code has the same normalized tokens as code elsewhere in the repository, under one consistent renaming "
        "of identifiers and changed literals. Two copies are two places to fix the next bug: call or extend the "
        "existing code instead.", _REUSE, "medium", _MAJOR),
    "reuse/near-copy-file": RuleDoc(
        "New file is a near copy of an existing file",
        "A new file's text is mostly covered by one file that existed before (a fork of a module). Extend or "
        "parameterize the original instead of keeping two versions.", _REUSE, "high", _MAJOR),
    "readability/narrating-comment": RuleDoc(
        "Comment tells the story of the edit",
        "An added comment narrates the change (\"changed\", \"fixed the bug\", \"no longer needed\", \"per review\") "
        "instead of explaining the code. That history belongs in the commit message; the comment should say why.",
        _READABILITY, "high", _MAJOR),
    "readability/ticket-reference": RuleDoc(
        "Comment cites a ticket without a reason",
        "An added comment names a ticket or issue (PAY-4821, GH-1234) and gives no reason. The reader needs the "
        "reason in the code; the ticket may move or close.", _READABILITY, "high", _MAJOR),
    "readability/commented-out-code": RuleDoc(
        "Code left commented out",
        "Three or more added comment lines that parse as code. Version control keeps old code; commented-out code "
        "goes stale and misleads.", _READABILITY, "high", _MINOR),
    "tests/missing-tests": RuleDoc(
        "New behaviour without a test",
        "A source file gains a function or branches absent at the merge base, and the change adds or changes no "
        "test file. Behaviour without a test can break unnoticed.", _TESTS, "medium", _MAJOR),
    "tests/fix-without-test": RuleDoc(
        "Fix without a test",
        "The change is marked as a fix, alters what source code does, and changes no test file. A fix without a "
        "test that fails before it can regress unnoticed.", _TESTS, "medium", _MAJOR),
    "correctness/swallowed-exception": RuleDoc(
        "Broad exception handler hides the failure",
        "A broad handler (Python `except Exception`, or a JavaScript catch around a security check) does nothing or "
        "returns a default, so a real failure looks like success. Catch the specific error, or handle and report it.",
        _CORRECTNESS, "high", _MAJOR),
    "correctness/empty-catch": RuleDoc(
        "Empty catch block",
        "A catch block or promise `.catch` handler that is empty or holds only comments drops the error. Handle, log "
        "or rethrow it, or say in a comment why it can be ignored.", _CORRECTNESS, "high", _MAJOR),
    "correctness/unhandled-rejection": RuleDoc(
        "Promise rejection not handled",
        "A promise is discarded (`void p`, or an async call that is not awaited) with no rejection handler: a "
        "failure is lost, or ends the process as an unhandled rejection.", _CORRECTNESS, "medium", _MAJOR),
    "correctness/dropped-error": RuleDoc(
        "Go error dropped",
        "An `if err != nil` block returns nil or nothing, or the error is assigned to `_`: the caller never learns "
        "of the failure. Return or wrap the error.", _CORRECTNESS, "high", _MAJOR),
    "correctness/ignored-exit-status": RuleDoc(
        "Shell command's failure ignored",
        "`|| true`, `|| :` or `set +e` in a script or CI file lets a failing command pass silently. Handle the "
        "failure, or let it stop the script.", _CORRECTNESS, "high", _MAJOR),
    "security/committed-secret": RuleDoc(
        "Credential committed to the repository",
        "A private key, an access token in a known provider format, or a high-entropy value assigned to a "
        "secret-named variable is in the change. Anyone with read access can use it: revoke it and read it from the "
        "environment or a secret store.", ("security", "correctness", "external/cwe/cwe-798"), "high", _BLOCKER),
    "security/shell-injection": RuleDoc(
        "Shell command built from values",
        "A command run through a shell is built by formatting or concatenation: a value with shell syntax runs its "
        "own commands. Pass an argument list without a shell.", ("security", "correctness", "external/cwe/cwe-078"),
        "high", _MAJOR),
    "security/sql-injection": RuleDoc(
        "SQL statement built from values",
        "An SQL statement is built by formatting and executed: a value with SQL syntax changes the query. Use "
        "placeholders and parameters.", ("security", "correctness", "external/cwe/cwe-089"), "high", _MAJOR),
    "security/eval": RuleDoc(
        "Code evaluated from a value",
        "`eval`, `exec` or `new Function` of a non-literal runs whatever the value holds.",
        ("security", "correctness", "external/cwe/cwe-095"), "medium", _MAJOR),
    "security/unsafe-yaml": RuleDoc(
        "YAML loaded with an unsafe loader",
        "`yaml.load` without a safe loader can construct arbitrary objects from the document. Use `yaml.safe_load` "
        "or `Loader=yaml.SafeLoader`.", ("security", "correctness", "external/cwe/cwe-502"), "high", _MAJOR),
    "security/unsafe-deserialization": RuleDoc(
        "Request data deserialized with pickle",
        "`pickle`, `dill` or `marshal` loads data taken from a request: unpickling runs code the sender chooses.",
        ("security", "correctness", "external/cwe/cwe-502"), "medium", _MAJOR),
    "security/tls-verification-off": RuleDoc(
        "TLS certificate verification turned off",
        "Certificate or host-name verification is disabled (`verify=False`, `rejectUnauthorized: false`, "
        "`InsecureSkipVerify: true`): anyone on the network path can read and change the traffic.",
        ("security", "correctness", "external/cwe/cwe-295"), "high", _MAJOR),
    "security/open-redirect": RuleDoc(
        "Redirect to a URL taken from the request",
        "A value from the request (query, form, header, path) starts the URL a redirect or `Location` header sends "
        "the browser to, with no check of its host: a link to this site can send users anywhere. A check that it "
        "starts with `/` is not one (`//evil.example` passes it). Check the parsed host against an allowlist.",
        ("security", "correctness", "external/cwe/cwe-601"), "medium", _MINOR),
    "security/regex-injection": RuleDoc(
        "Regular expression built from unescaped input",
        "Request input, argv or the environment reaches a regular expression constructor unescaped: its "
        "metacharacters change what matches, and a crafted pattern can take exponential time. Escape it "
        "(`re.escape`, `regexp.QuoteMeta`, an escapeRegExp helper).",
        ("security", "correctness", "external/cwe/cwe-1333"), "medium", _MINOR),
    "security/prototype-pollution": RuleDoc(
        "Object literal keyed by parsed input",
        "An object literal used as a dictionary takes its keys from parsed input (`__proto__`, `constructor` "
        "included): a crafted key changes every object's prototype. Use `Object.create(null)` or a `Map`, or "
        "refuse those keys.", ("security", "correctness", "external/cwe/cwe-1321"), "medium", _MINOR),
    "correctness/discarded-error-used": RuleDoc(
        "Error discarded, its value used",
        "Go: `v, _ := f()` throws away the error of a call that can fail, and `v` is used afterwards: on failure it "
        "is the zero value, read as if it were real. JavaScript/TypeScript: a Node-style callback never reads its "
        "error (`(err, data) => JSON.parse(data)`), and uses the value, undefined on failure. Check the error.",
        _CORRECTNESS, "medium", _MINOR),
    "correctness/wrong-exception": RuleDoc(
        "Handler catches an exception the guarded call never raises",
        "Every handler of the try names exceptions the one call it guards does not raise, in Python (base64 "
        "decoding raises `binascii.Error`, not `UnicodeError`), Java and Kotlin (`Integer.parseInt` and "
        "`toInt()` raise `NumberFormatException`, not `NullPointerException`) and C# "
        "(`Convert.FromBase64String` raises `FormatException`, not `ArgumentException`): the failure it was written for escapes it.",
        _CORRECTNESS, "medium", _MINOR),
    "correctness/literal-typo": RuleDoc(
        "String literal one letter away from its siblings",
        "In a comparison chain, a switch or a membership list, one literal is a swapped, dropped or doubled letter "
        "away from another (`'defalte'` beside `'deflate'`): the branch it guards never matches.",
        _CORRECTNESS, "medium", _MINOR),
    "security/modulo-bias": RuleDoc(
        "Random bytes reduced modulo a size that is not a power of two",
        "A random byte taken `% n` for a token, where n is not a power of two, makes some characters likelier "
        "than others. Use `secrets.choice`, `crypto.randomInt` or rejection sampling.",
        ("security", "correctness", "external/cwe/cwe-330"), "medium", _MINOR),
    "correctness/listener-leak": RuleDoc(
        "Event listener added per request and never removed",
        "A request handler adds a listener to a long-lived object and never removes it: every request adds "
        "another, until the process runs out of memory or warns of a leak. Use `once`, `{ once: true }`, or "
        "remove it in the same handler.", _CORRECTNESS, "medium", _MINOR),
    "process/repro-in-diff": RuleDoc(
        "Reproduction files are part of the change",
        "Files under `repro/` or `.repro/` are meant to reproduce a problem during review, not to be merged.",
        _PROCESS, "very-high", _MAJOR),
    "process/missing-reproduction": RuleDoc(
        "Required reproduction is missing",
        "The repository's policy requires a reproduction for this change and none was found (from the issue, "
        "`REPRODUCTION.md` or `.reviewgate/reproduction.md`).", _PROCESS, "very-high", _MAJOR),
    "process/reproduction-not-rerun": RuleDoc(
        "Reproduction did not pass against the change",
        "A reproduction exists, but the verify's `reproduce` step did not pass against this change.",
        ("process", "correctness"), "very-high", _MAJOR),
    "suppression/missing-reason": RuleDoc(
        "Suppression without a reason",
        "An added `reviewgate: ignore[...]` gives no reason: the next reader cannot tell whether it still holds.",
        _SUPPRESSION, "very-high", _MINOR),
    "suppression/unknown-rule": RuleDoc(
        "Suppression names no known rule",
        "An added `reviewgate: ignore[...]` names neither a rule id nor a family, so it suppresses nothing; the "
        "finding's title names the closest id.", _SUPPRESSION, "very-high", _MINOR),
}


@cache
def rule_examples() -> dict[str, Any]:
    """Each rule's example that fires it and one that does not, as docs/lenses.md shows them:
    `{rule: {"fires": {"path", "language", "code"}, "does-not-fire": {...}}}`."""
    data: dict[str, Any] = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
    return data
