"""Modulo bias in a random token (Python, JavaScript/TypeScript, Go): a random byte or integer
(`os.urandom`, `secrets.token_bytes`, `random.getrandbits`, `crypto.randomBytes`,
`crypto.getRandomValues`, Go's `rand.Read`) reduced `% n` where `n` is not a power of two: a
literal, or the length of an alphabet this file spells out (`len(ALPHABET)`, `chars.length`).

256 values do not divide evenly into 62: the first 8 characters of the alphabet come up 5 times
in 256, the rest 4, so tokens and ids are easier to guess than their length says. Safe:
`secrets.choice`/`secrets.randbelow`/`crypto.randomInt` (no `%` to find), rejection sampling (the
function compares the random value with a limit and draws again), `n` a power of two. An
alphabet whose length the file does not show is left alone.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

MODULO_BIAS = Rule(
    id="security/modulo-bias",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Random bytes reduced modulo a size that is not a power of two",
    full=(
        "A random byte taken `% n` for a token, where n is not a power of two, makes some characters "
        "likelier than others. Use `secrets.choice`, `crypto.randomInt` or rejection sampling."
    ),
    tags=("security", "correctness", "external/cwe/cwe-330"),
    precision="medium",
    fires_on=(
        "Python, JS/TS, Go: a random byte or integer (`os.urandom`, `secrets.token_bytes`, "
        "`secrets.randbits`, `random.getrandbits`, `crypto.randomBytes`, `crypto.getRandomValues`, "
        "`rand.Read`) reduced `% n` where `n` is a literal or the length of an alphabet the file "
        "spells out (`len(ALPHABET)`, `chars.length`, `string.ascii_letters + string.digits`) and not "
        "a power of two"
    ),
    not_on=(
        "`secrets.choice`, `secrets.randbelow`, `crypto.randomInt`; rejection sampling (the function "
        "compares the random value with a limit); `n` a power of two; an alphabet whose length the "
        "file does not show"
    ),
    fires=(
        Example(
            file=File("app/tokens.py", "python", """\
import os
import string

ALPHABET = string.ascii_letters + string.digits


def token(length=20):
    return "".join(ALPHABET[byte % len(ALPHABET)] for byte in os.urandom(length))
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/tokens.py", "python", """\
import secrets
import string

ALPHABET = string.ascii_letters + string.digits


def token(length=20):
    return "".join(secrets.choice(ALPHABET) for _ in range(length))
"""),
        ),
    ),
    by_record=True,
    record=Record(
        findings=0,
        holding=0,
        where=(
            "no finding in the whole trees of the tuning half's 16 projects and of 25 PyPI and npm packages "
            "(2026-12-06)"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
    ),
)

RULES = (MODULO_BIAS,)
RULE_MODULO_BIAS = MODULO_BIAS.id


if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow

_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO})
_NEEDLES = ("urandom", "token_bytes", "getrandbits", "randbits", "randbytes", "randomBytes", "getRandomValues",
            "rand.Read", "randomFillSync")
_PYTHON_SOURCES = frozenset(
    {"os.urandom", "urandom", "secrets.token_bytes", "token_bytes", "random.getrandbits", "getrandbits",
     "random.randbytes", "randbytes", "secrets.randbits", "randbits"}
)  # fmt: skip
_STRING_CONSTANTS = {
    "string.ascii_letters": 52, "string.ascii_lowercase": 26, "string.ascii_uppercase": 26, "string.digits": 10,
    "string.hexdigits": 22, "string.octdigits": 8, "string.punctuation": 32, "string.printable": 100,
    "ascii_letters": 52, "ascii_lowercase": 26, "ascii_uppercase": 26, "digits": 10,
}  # fmt: skip
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _power_of_two(number: int) -> bool:
    return number > 0 and number & (number - 1) == 0


def _finding(path: str, text: str, line: int, where: str, divisor: str, size: int) -> Finding:
    code = code_line(text, line)
    over = 256 % size if size < 256 else 0
    skew = (
        f" With one byte (256 values), {over} of the {size} results come up {256 // size + 1} times in 256 "
        f"and the rest {256 // size}."
        if 0 < over
        else ""
    )
    return bug_finding(
        rule=RULE_MODULO_BIAS,
        category="security",
        title=f"Random value reduced modulo {size}, not a power of two",
        body=(
            f"{matched(code)}: {where}, is reduced `% {divisor}` ({size}), which does not divide the range "
            f"of random values evenly, so some results are likelier than others.{skew} A token or id made "
            "this way is easier to guess than its length says. Use `secrets.choice`/`secrets.randbelow` "
            "(Python), `crypto.randomInt` (Node), `rand.Int(rand.Reader, max)` (Go), or draw again while "
            "the value is at or above the largest multiple of the size (rejection sampling)."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _python_source(node: ast.expr) -> bool:
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    return isinstance(node, ast.Call) and call_name(node) in _PYTHON_SOURCES


def _reductions(tree: ast.Module, added: dict[int, str]) -> list[ast.BinOp]:
    """The `%` operations on added lines: what the rule reads the rest of the module for."""
    return [node for node in nodes_of(tree, ast.BinOp) if isinstance(node.op, ast.Mod) and node.lineno in added]


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Flows, describe

    reductions = _reductions(tree, added)
    if not reductions:
        return
    strings = _python_strings(nodes_of(tree, ast.Assign))
    flows = Flows(tree, lambda scope: Flow(scope, _python_source, frozenset()))
    for node in sorted(reductions, key=lambda item: (item.lineno, item.col_offset)):
        size = _python_size(node.right, strings)
        if size is None or _power_of_two(size):
            continue
        flow = flows.of(node)
        origin = flow.origin(node.left)
        if origin is None or _rejects(flow):
            continue
        yield _finding(path, text, node.lineno, describe(origin), ast.unparse(node.right), size)


def _python_strings(nodes: Sequence[ast.AST]) -> dict[str, int]:
    """Names assigned a string whose length is known: `ALPHABET = string.ascii_letters + "0123"`."""
    found: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            size = _length(node.value, found)
            if size is not None:
                found[node.targets[0].id] = size
    return found


def _length(node: ast.expr, strings: dict[str, int]) -> int | None:
    from reviewgate.reviewers.builtin.languages.python_flow import dotted

    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return len(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _length(node.left, strings), _length(node.right, strings)
        return None if left is None or right is None else left + right
    name = dotted(node)
    return _STRING_CONSTANTS.get(name, strings.get(name))


def _python_size(node: ast.expr, strings: dict[str, int]) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args:
        return _length(node.args[0], strings)
    return None


def _rejects(flow: Flow) -> bool:
    """The scope compares a random value with a limit: rejection sampling."""
    for node in flow.nodes:
        if isinstance(node, ast.Compare) and any(isinstance(op, _COMPARISONS) for op in node.ops):
            if any(flow.origin(side) is not None for side in (node.left, *node.comparators)):
                return True
    return False


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "js_sources": re.compile(r"(?:randomBytes|randomFillSync|getRandomValues)\s*\("),
        "go_sources": re.compile(r"rand\.Read\s*\("),
        "filled": re.compile(r"\b(?:getRandomValues|randomFillSync|rand\.Read)\s*\(\s*(?P<name>[\w$]+)\s*[,)]"),
        "modulo": re.compile(r"%(?!=)"),
        "number": re.compile(r"\s*(?P<number>\d+)\b"),
        "js_length": re.compile(r"\s*(?P<name>[\w$]+)\s*\.\s*length\b"),
        "go_length": re.compile(r"\s*(?:\w+\()?\s*len\(\s*(?P<name>\w+)\s*\)\s*\)?"),
        "string": re.compile(
            r"(?<![\w$.])(?P<name>[\w$]+)\s*(?::\s*string\s*)?(?::=|=(?![=>]))\s*(?P<quote>['\"`])(?P<text>[^'\"`\\\n]*)(?P=quote)"
        ),
    }


def _text(text: str, path: str, added: dict[int, str], go: bool) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import operand_before
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow, describe, innermost

    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    reductions = [match for match in patterns["modulo"].finditer(masked) if source.line_of(match.start()) in added]
    if not reductions:
        return
    strings = {match.group("name"): len(match.group("text")) for match in patterns["string"].finditer(text)
               if masked[match.start()] == text[match.start()]}
    flow = TextFlow(source, [patterns["go_sources" if go else "js_sources"]], None, go, patterns["filled"])
    for match in reductions:
        size, divisor = _text_size(masked, match.end(), strings, go)
        if size is None or _power_of_two(size):
            continue
        start = operand_before(source, match.start())
        origin = flow.origin(start, match.start())
        if origin is None:
            continue
        function = innermost(flow.functions, match.start())
        if function is not None and origin[2] and _text_rejects(masked, origin[2], function.body_open, function.body_close):
            continue
        yield _finding(path, text, source.line_of(match.start()), describe(origin), divisor, size)


def _text_size(masked: str, after: int, strings: dict[str, int], go: bool) -> tuple[int | None, str]:
    patterns = _patterns()
    number = patterns["number"].match(masked, after)
    if number is not None:
        return int(number.group("number")), number.group("number")
    length = patterns["go_length" if go else "js_length"].match(masked, after)
    if length is not None:
        return strings.get(length.group("name")), " ".join(length.group(0).split())
    return None, ""


def _text_rejects(masked: str, name: str, start: int, end: int) -> bool:
    """The function compares the random value with a limit (`if (byte >= 248) continue`)."""
    escaped = re.escape(name)
    return re.search(rf"(?<![\w$.]){escaped}(?:\[[^\]]*\])?\s*(?:<|>)=?(?!=)|(?:<|>)=?\s*{escaped}(?![\w$])",
                     masked[start:end]) is not None


MODULO_BIAS_LENS = TwoReaderLens(RULE_MODULO_BIAS, _LANGUAGES, _NEEDLES,
                                 _python,
                                 lambda text, path, added, language: _text(text, path, added, language is Language.GO),
                                 lambda tree, added: bool(_reductions(tree, added)))

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (MODULO_BIAS_LENS,)
