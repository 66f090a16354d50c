"""Committed secrets in added lines, any text file ("a secret in a log" is one too).

A secret that reached the repository is leaked whatever happens to the branch, so a credential in
an issuer's documented format (reviewgate.secret_formats) is a blocker wherever it is. A generic
high-entropy value assigned to a secret-like name is weaker evidence: it blocks in code, and is
minor where example values live (documentation, comments, test files, example code); so is a
private key generated for a test or an example server. Look-alikes that must not
fire: documented example keys, placeholders, alphabets, charsets and tables (characters in runs of
consecutive code points, too many distinct ones to repeat none by chance, a character class; or a
name that says so: `tokenAlphabet`, `SECRET_CHARSET`), and key-shaped strings in test
fixtures named as such (a fixture directory, a data file among the tests, or a line in a test
saying fake/dummy/example/test). A provider-format key in test code without such a name still blocks:
suppress it with a reason if it is a test of the detector itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.file_kinds import is_test_data, is_test_file
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.rule import Example, File, Rule
from reviewgate.secret_formats import PRIVATE_KEY_HEADER, TOKEN_PATTERNS

COMMITTED_SECRET = Rule(
    id="security/committed-secret",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.BLOCKER,
    short="Credential committed to the repository",
    full=(
        "A private key, an access token in a known provider format, or a high-entropy value assigned "
        "to a secret-named variable is in the change. Anyone with read access can use it: revoke it "
        "and read it from the environment or a secret store."
    ),
    tags=("security", "correctness", "external/cwe/cwe-798"),
    precision="high",
    fires_on=(
        "any text file: private key blocks; AWS (`AKIA`/`ASIA`), GitHub (`ghp_`, `gho_`, `ghu_`, "
        "`ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-` …), Slack (`xox?-`), Google (`AIza`), "
        "Stripe live, Anthropic (`sk-ant-`), OpenAI and npm tokens by their documented prefixes — a "
        "blocker wherever it is, docs and tests included (`export GITHUB_TOKEN=ghp_…` in "
        "`README.md`); a quoted value of ≥ 12 characters with ≥ 3.5 bits/char entropy assigned to a "
        "name containing password/passphrase/secret/token/api_key/access_key/private_key/client_secret, "
        "or a passphrase of ≥ 3 lower-case words joined by underscores assigned to a password's or "
        "secret's name (`SMTP_PASSWORD = \"tangerine_elephant_violin_cactus\"`) — a "
        "blocker in code that runs, **minor** in documentation (`docs/`, `doc/`, `*.md`, `*.rst`, "
        "`*.txt`, `*.adoc`, code blocks in them included), in a whole-line comment, or in a test file "
        "(`export APP_SECRET_KEY=\"5f35…\"` in a `.rst` page) or example code, or inside an `example` or "
        "`examples` key of a JSON or YAML file (an OpenAPI document's examples, botocore's "
        "`examples-1.json`, read by indentation); a private key block is "
        "minor in a test file, a test directory the repository's test runner names (pytest's "
        "`testpaths`), example code (`examples/`, `samples/`), or test-support code: the nearest "
        "directory above it holding Python or JS/TS code is imported by test files only (urllib3 "
        "2.8.0's `dummyserver/certs/server.key`, its test server's; a key in a package that other "
        "code imports still blocks). The finding says what matched (format "
        "and length, or length and entropy), never the value"
    ),
    not_on=(
        "AWS's documented `…EXAMPLE` keys; placeholders (`${…}`, `{{…}}`, `<your-key>`, `changeme`, "
        "`demo_…`, `fake…`, `dummy…`, URLs, paths, a provider's prefix followed by X's or zeros, "
        "`xoxp-XXXXXXXXXX-…`, a value elided with `...` or `…`); values spelt as identifiers, words "
        "of one case joined by underscores or hyphens "
        "(`__name__ = \"requires_csrf_token\"`; under a password's or secret's name only when the line "
        "names the same identifier or the value shares a word with the name), or camelCase or PascalCase words of letters outside a "
        "password's name, each but the last of three letters at least, alone or joined by dots "
        "(`RESUME_TOKEN_CHANGED = \"resumeTokenChanged\"`, `\"output_token\": \"DistributionList.NextMarker\"`); a private key header with no base64 body after it "
        "(`append(\"-----BEGIN PRIVATE KEY-----\\n\")` in an encoder); names that describe a secret rather than hold it (`*_env`, `*_name`, `*_url`, "
        "`*_path`, `*_id`, `*_alphabet`, `*_charset`, `*_chars`, `*_table` …); values read from the "
        "environment; a value with a character outside ASCII (a translation's sentence: `reset_password: "
        "\"ตั้งรหัสผ่านใหม่\"`), as keys and tokens are ASCII; alphabets, charsets and tables in any language (a value whose characters run in "
        "consecutive code points averaging ≥ 3, such as `A-Za-z0-9-_`, base32's `A-Z2-7`, base58's, hex "
        "digits of both cases `0123456789abcdef0123456789ABCDEF`; ≥ 40 distinct characters, a shuffled "
        "table; a character class or list of ranges, `[A-Za-z0-9_-]{32}`): they carry no secret; files "
        "under `fixtures/`, "
        "`testdata/`, `__fixtures__/`, and lines in test files that say "
        "fake/dummy/example/sample/test/mock"
    ),
    severity_note="(minor for example values)",
    fires=(
        Example(
            file=File("app/payments.py", "python", """\
api_key \x3d "q8Zr3vLm9Tx2Wp7KdF4hN6"
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/payments.py", "python", """\
import os

api_key = os.environ["PAYMENTS_API_KEY"]
"""),
        ),
    ),
)

RULES = (COMMITTED_SECRET,)


RULE_SECRET = COMMITTED_SECRET.id

_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)"
)
_ASSIGNED_VALUE = r"""["']?\s*(?::=|=|:)\s*[bru]?(?P<quote>["'])(?P<value>[^"'\s]{12,})(?P=quote)"""
_SECRET_ASSIGNMENT = LazyPattern(rf"(?P<name>[\w.-]*{_SECRET_WORD}[\w.-]*){_ASSIGNED_VALUE}", re.IGNORECASE)
# What every match of `_SECRET_ASSIGNMENT` holds from its secret word on: searched for first, as
# the whole pattern (its leading `[\w.-]*` tried from every character, and back) costs far more on a
# line that names a token but assigns it no quoted value, which is most of those that name one.
_SECRET_WORD_ASSIGNED = LazyPattern(rf"{_SECRET_WORD}[\w.-]*{_ASSIGNED_VALUE}", re.IGNORECASE)
# Literal parts that every token pattern (first) and every secret name of `_SECRET_ASSIGNMENT`
# (second, with the same IGNORECASE) contains: a line without them cannot match, and most added
# lines have none. The patterns themselves, `_SECRET_ASSIGNMENT` with its leading `[\w.-]*` above
# all, cost far more per line.
_MAY_HOLD_A_TOKEN = re.compile(
    r"PRIVATE KEY|AKIA|ASIA|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt)-|xox[abposr]-|AIza|k_live_|sk-|npm_"
)
_MAY_NAME_A_SECRET = re.compile(r"passw|passphrase|pwd|secret|token|key", re.IGNORECASE)
# The quoted value `_SECRET_ASSIGNMENT` needs: far cheaper to look for than the whole pattern,
# and most lines that name a key (`key`, `token`) quote no 12-character value.
_QUOTED_VALUE = re.compile(r"""["'][^"'\s]{12,}["']""")
# A line `_secret_in` can find a secret in holds a token's literal, or a quoted value and a
# secret's name: the scan of a file over the size cap (oversized.py) reads only such lines
# (the quoted value first: in code that names keys, it is the rarer).
# Compiled at import: oversized.py hands them to re's own searches as patterns.
MAY_HOLD_A_SECRET = ((_MAY_HOLD_A_TOKEN,), (_QUOTED_VALUE, _MAY_NAME_A_SECRET))
_NOT_A_SECRET_NAME = LazyPattern(
    r"fake|dummy|example|sample|placeholder|test|mock|stub|fixture", re.IGNORECASE
)
# Names that hold where a secret lives or what it is called, not the secret itself.
_DESCRIBES_A_SECRET = LazyPattern(
    r"[_.-]?(?:env|var|name|url|uri|path|file|header|field|type|prefix|length|id|kind|format|pattern|regex"
    r"|alphabet|charset|chars|characters|symbols|letters|digits|table)$",
    re.IGNORECASE,
)
_PLACEHOLDER = LazyPattern(
    r"://|^/|\$\{|\{\{|<[\w-]+>|%\(|^\$|changeme|change_me|xxxx|\*\*\*\*|your[_-]|example"
    r"|demo[_-]|fake|dummy|placeholder"
    # an elided example (`"eyJ2IjoiMSIsInMiOjEsImMiOi..."`): a documented value cut short, no key;
    # a date and time (`"PasswordLastUsed": "2016-09-08T21:47:36Z"`): when, not what
    r"|\.\.\.$|…$|^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?$",
    re.IGNORECASE,
)
# A value spelt like an identifier, words of letters in one case joined by underscores or hyphens
# (`requires_csrf_token` as a function's `__name__`, a `__WEBPACK_MODULE_REFERENCE__` marker,
# paramiko's `MSG_USERAUTH_GSSAPI_TOKEN: "userauth-gssapi-token"`): a name the code refers to, not
# a key, which would mix cases or digits.
_IDENTIFIER = LazyPattern(r"_*(?:[a-z]+(?:[_-][a-z]+)+|[A-Z]+(?:_[A-Z]+)+)_*")
# The same in camelCase or PascalCase, outside a password's name (mongodb's and typeorm's
# `RESUME_TOKEN_CHANGED = "resumeTokenChanged"`, an event's name; botocore's paginators'
# `"input_token": "ExclusiveStartKey"`, a field's name): words of letters only, where a key mixes in
# digits. Or such names joined by dots (`"output_token": "DistributionList.NextMarker"`), a path
# to a field, each part maybe indexed (`"StreamDescription.Shards[-1].ShardId"`).
# Each word but the last has three letters at least (`ShardId` ends in one of two): a random value of
# letters alone alternates cases in ones and twos (`KqZtVbNm…`).
_CAMEL_NAME = r"(?:[a-z]{3,}|[A-Z][a-z]{2,})(?:[A-Z][a-z]{2,})*"
_FIELD = rf"{_CAMEL_NAME}(?:[A-Z][a-z]+)?(?:\[-?\d+\])?"
_CAMEL_IDENTIFIER = LazyPattern(rf"{_CAMEL_NAME}[A-Z][a-z]+|{_FIELD}(?:\.{_FIELD})+")
# A password's or a secret's name: what it holds is meant to be typed or remembered, so lower-case
# words joined by underscores there are a passphrase (`"correct_horse_battery_staple"`) unless the
# line names the same identifier (`requires_csrf_token.__name__ = "requires_csrf_token"`).
_PASSWORD_NAME = LazyPattern(r"passw|passphrase|pwd|secret", re.IGNORECASE)
# Words enough for a passphrase whatever its entropy per character (words of a few letters repeat them).
MIN_PASSPHRASE_WORDS = 3
# A provider's prefix followed by nothing but X's or zeros (`xoxp-XXXXXXXXXX-…`, `AKIA0000…`):
# the format's placeholder in a sample, no key.
_PLACEHOLDER_CHARACTERS = frozenset("Xx0*-_")
# A private key block's body: base64 lines after its header (on the same line after a `\n`
# escape, or on the lines that follow, past an encrypted key's `Proc-Type:`/`DEK-Info:` lines).
# A header with no body is the text an encoder writes (`append("-----BEGIN PRIVATE KEY-----\n")`).
_KEY_BODY = LazyPattern(r"[A-Za-z0-9+/]{40,}")
# The lines after a header read for its body: a piece of a file the lens reads in part (an
# oversized or left-out file) carries them after each line it holds (oversized.py).
LINES_BEFORE_KEY_BODY = 4
# What may stand between a header and its body: an encrypted key's fields, a blank line, and the
# quotes, comment stars or margin bars a key in source code is written with.
_KEY_PREAMBLE = LazyPattern(r"""[\s"'`*|+]*(?:(?:Proc-Type|DEK-Info):.*)?$""")
_PRIVATE_KEY_BLOCK = "private key block"
# Shannon entropy per character above which a quoted value looks random rather than a word
# (English text sits near 3-4 bits; base64 and hex keys of this length above 4).
MIN_ENTROPY_BITS = 3.5


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(count / len(value) * math.log2(count / len(value)) for count in counts.values())


# A value of distinct characters whose runs of consecutive code points average this many is an
# alphabet (`A-Za-z0-9-_`, base32's `A-Z2-7`, Crockford's and base58's with letters left out).
MIN_ALPHABET_RUN = 3.0
# A value this long with no character twice is a table (a shuffled alphabet, a substitution
# table): a random key of 40 base64 characters repeats one with a chance of 1 - 1e-6.
MIN_TABLE_LENGTH = 40


# A regular expression's character class (`[A-Za-z0-9_-]{32}`) or a bare list of ranges
# (`A-Za-z0-9`): what a token may hold, not a token.
_CHARACTER_CLASS = LazyPattern(r"\^?\[\^?(?:[^\]\\]|\\.)+\](?:\{\d+(?:,\d*)?\}|[+*?])?\$?|(?:\w-\w|[_+/=.~-])+")
_RANGE = LazyPattern(r"(\w)-(\w)")


def is_alphabet(value: str) -> bool:
    """A charset, an alphabet or a table rather than a secret: characters in runs of consecutive
    code points (ascending or descending: `0123456789abcdef0123456789ABCDEF` too), or no character
    twice in a value long enough that only a table would hold no repeat, or a character class.
    It carries no secret however high its entropy."""
    runs = 1 + sum(1 for left, right in zip(value, value[1:], strict=False) if abs(ord(right) - ord(left)) != 1)
    if len(value) / runs >= MIN_ALPHABET_RUN:
        return True
    if len(set(value)) == len(value) and len(value) >= MIN_TABLE_LENGTH:
        return True
    return _CHARACTER_CLASS.fullmatch(value) is not None and any(
        ord(low) < ord(high) for low, high in _RANGE.findall(value)
    )


def _lines_matching(pattern: re.Pattern[str], text: str) -> set[int]:
    """The indices of the lines of `text` (joined by LF) that `pattern` finds something in. None of
    the patterns used here can match across a line's end, so one search over the text finds the
    first match of every line a search of that line alone would."""
    found: set[int] = set()
    index = position = 0
    for match in pattern.finditer(text):
        start = match.start()
        index += text.count("\n", position, start)  # the matches come in order: each LF counted once
        position = start
        found.add(index)
    return found


def _candidate_lines(lines: list[str]) -> list[int]:
    """In order, the indices of the lines `_secret_in` may find a secret in: those holding a token's
    literal or a quoted value (without either it answers None). Searched over the file's added text at
    once: a search per line was most of the lens's time on a large change."""
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:  # a line holding LF (never one from git's diff, split on it)
        return list(range(len(lines)))
    return sorted(_lines_matching(_MAY_HOLD_A_TOKEN, text) | _lines_matching(_QUOTED_VALUE, text))


class SecretMatch(NamedTuple):
    """What made a line look like a committed secret, without the value itself."""

    kind: str
    provider: bool  # an issuer's documented format: strong evidence wherever it is
    evidence: str  # what matched, without the value itself


def _named_as_fixture(path: str, line: str) -> bool:
    return is_test_data(path) or (is_test_file(path) and bool(_NOT_A_SECRET_NAME.search(line)))


def _has_key_body(added: list[tuple[int, str]], index: int) -> bool:
    """Whether the private key header on `added[index]` is followed by a key's base64 body, on its
    own line after the header or on one of the next added lines. True when a line it would need is
    not among the added ones (a change that adds the header alone, the filtered scan of an
    oversized file): only lines that are there and hold no body tell a header from a key."""
    number, line = added[index]
    header = PRIVATE_KEY_HEADER.search(line)
    if header is not None and _KEY_BODY.search(line, header.end()):
        return True
    following = added[index + 1 : index + 1 + LINES_BEFORE_KEY_BODY]
    for offset in range(LINES_BEFORE_KEY_BODY):
        if offset >= len(following) or following[offset][0] != number + 1 + offset:
            return True
        text = following[offset][1]
        if _KEY_BODY.search(text):
            return True
        if not _KEY_PREAMBLE.match(text):
            return False  # the line after the header is code, not the key's
    return False


def _identifier_words(value: str) -> list[str]:
    """The words of an identifier-shaped value (`_IDENTIFIER`): what its underscores or hyphens join."""
    return re.split(r"[_-]", value)


def _is_passphrase(name: str, value: str, line: str) -> bool:
    """Lower-case words joined by underscores, assigned to a password's or secret's name, that the
    line does not also use as a name (outside the quotes, or as a dunder attribute's value) and that
    shares no word with the name (`password_reset_view = "password_reset_confirm"`: a view's name)."""
    if not value.islower() or _PASSWORD_NAME.search(name) is None or name.endswith("__"):
        return False
    if set(re.findall(r"[a-z]{3,}", name.lower())) & set(_identifier_words(value)):
        return False
    named = re.search(rf"(?<![\w\"'`]){re.escape(value)}(?![\w\"'`])", line)
    return named is None


def _is_placeholder_token(token: str) -> bool:
    """A provider's four-character prefix and then only X's or zeros (`xoxp-XXXXXXXXXX-XXXXXXXXXX`)."""
    return set(token[4:]) <= _PLACEHOLDER_CHARACTERS


class SecretsLens:
    rule = RULE_SECRET

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            added = sorted(change.added_lines().items())
            for index in _candidate_lines([line for _number, line in added]):
                number, line = added[index]
                found = self._secret_in(line)
                if found is None or _named_as_fixture(change.path, line):
                    continue
                if found.kind == _PRIVATE_KEY_BLOCK and not _has_key_body(added, index):
                    continue
                # Read only where a secret is found (secret_places.py): not at start-up.
                from reviewgate.reviewers.builtin.lenses.secret_places import (
                    example_context,
                    example_or_test_code,
                    test_support,
                )

                if not found.provider:
                    context = example_context(request, change.path, number, line)
                elif found.kind == _PRIVATE_KEY_BLOCK:
                    # A key generated for a test or an example server signs nothing anyone trusts;
                    # a token in an issuer's format may be live wherever it is, so it still blocks.
                    context = example_or_test_code(request, change.path) or test_support(request, change.path)
                else:
                    context = None
                yield self._finding(change.path, number, line, found, context)

    def _finding(self, path: str, number: int, line: str, found: SecretMatch, context: str | None) -> Finding:
        advice = (
            "Once pushed it is in the history for good: revoke it, rotate it, and read it from the "
            "environment or a secret store."
        )
        if context is not None:
            return lens_finding(
                rule=self.rule,
                category="security",
                finding_class=FindingClass.CORRECTNESS,
                severity=Severity.MINOR,
                title=f"Key-shaped example value ({found.kind})",
                body=(
                    f"Matched: {found.evidence}. It is in {context}, where example values live, and it is "
                    "in no issuer's documented key format, so it is reported as minor. If it is a real "
                    f"key: {advice} Otherwise a placeholder (`<your-key>`, `changeme`) says so to readers."
                ),
                path=path,
                line=number,
                code=line,
            )
        where = (
            "It is in an issuer's documented credential format, which blocks wherever it is (docs and tests too)."
            if found.provider
            else "It is in code that runs (not documentation, a comment or a test), and is not a placeholder, "
            "an environment lookup or a name that only describes a secret."
        )
        return lens_finding(
            rule=self.rule,
            category="security",
            finding_class=FindingClass.CORRECTNESS,
            severity=Severity.BLOCKER,
            title=f"Committed secret ({found.kind})",
            body=f"This line adds what looks like a {found.kind}. Matched: {found.evidence}. {where} {advice}",
            path=path,
            line=number,
            code=line,
        )

    def _secret_in(self, line: str) -> SecretMatch | None:
        if _MAY_HOLD_A_TOKEN.search(line) is None:
            return self._secret_assigned(line)
        for kind, pattern in TOKEN_PATTERNS:
            match = pattern.search(line)
            if match and "EXAMPLE" not in match.group(0):  # AWS's documented example keys end in EXAMPLE
                if kind != _PRIVATE_KEY_BLOCK and _is_placeholder_token(match.group(0)):
                    continue
                # The issuer's prefix and the length are the evidence; the rest is the secret.
                return SecretMatch(
                    kind, True, f"the {kind} format (`{match.group(0)[:4]}…`, {len(match.group(0))} characters)"
                )
        return self._secret_assigned(line)

    def _secret_assigned(self, line: str) -> SecretMatch | None:
        if (
            _MAY_NAME_A_SECRET.search(line) is None
            or _QUOTED_VALUE.search(line) is None
            or _SECRET_WORD_ASSIGNED.search(line) is None
        ):
            return None
        for match in _SECRET_ASSIGNMENT.finditer(line):
            value = match.group("value")
            name = match.group("name")
            if (
                _NOT_A_SECRET_NAME.search(name)
                or _DESCRIBES_A_SECRET.search(name)
                or _PLACEHOLDER.search(value)
                or is_alphabet(value)
                or not value.isascii()  # text in a script of its own (a translation): keys are ASCII
            ):
                continue
            if _CAMEL_IDENTIFIER.fullmatch(value) and _PASSWORD_NAME.search(name) is None:
                continue
            if _IDENTIFIER.fullmatch(value):
                if not _is_passphrase(name, value, line):
                    continue
                words = len(_identifier_words(value.strip("_")))
                if words >= MIN_PASSPHRASE_WORDS:
                    return SecretMatch(
                        f"passphrase assigned to `{name}`",
                        False,
                        f"{words} lower-case words ({len(value)} characters) assigned to `{name}`, a password's or secret's name",
                    )
            bits = entropy(value)
            if bits >= MIN_ENTROPY_BITS:
                return SecretMatch(
                    f"high-entropy value assigned to `{name}`",
                    False,
                    f"a {len(value)}-character value with {bits:.1f} bits of entropy per character "
                    f"(≥ {MIN_ENTROPY_BITS}) assigned to `{name}`",
                )
        return None

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (SecretsLens(),)
