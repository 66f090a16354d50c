"""A string literal one typing slip away from a sibling in the same set of comparisons (Python,
JavaScript/TypeScript, Go): `enc == 'gzip' or enc == 'deflate' or enc == 'defalte'`, a `case
'defalte':` among `case 'deflate':` siblings. The misspelt branch never matches what it was
written for, and nothing fails.

A slip is two adjacent letters swapped (`defalte`), or one letter left out or doubled inside the
word (`adress`/`address`); both literals at least 5 characters. Not a slip: a different letter
(`lower`/`upper`, `content`/`context` are different words), a plural or suffix (`item`/`items`,
the first or last letter), case, digits or punctuation only (`utf-8`/`utf8`, `int32`/`int64`), and
spelling variants (`colour`/`color`, `cancelled`/`canceled`).

The sets: Python `==`/`!=` chains under `or`/`and` and `if`/`elif` chains on one subject, `in`
of a literal tuple, list or set, `match` cases; JS/TS/Go comparisons of one subject within a
function, the `case` labels of one `switch`, and a literal list tested for membership
(`[...].includes(x)`, `new Set([...])`, `slices.Contains([]string{...}, x)`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.changed_lines import AddedSpans
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

LITERAL_TYPO = Rule(
    id="correctness/literal-typo",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="String literal one letter away from its siblings",
    full=(
        "In a comparison chain, a switch or a membership list, one literal is a swapped, dropped or "
        "doubled letter away from another (`'defalte'` beside `'deflate'`): the branch it guards "
        "never matches."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "Python, JS/TS, Go: a string literal one slip from a sibling in the same set of comparisons — "
        "two adjacent letters swapped (`defalte`/`deflate`) or a letter left out or doubled inside "
        "the word (`identiy`, `adress`), both at least 5 characters — in `==`/`!=` chains under "
        "`or`/`and`, `if`/`elif` chains on one subject, `in` of a literal tuple/list/set, `match` "
        "cases; JS/TS/Go comparisons of one subject in a function, the `case` labels of one `switch`, "
        "and a literal list tested for membership (`['gzip', 'deflate', 'defalte'].includes(x)`, `new "
        "Set([...])`, `slices.Contains([]string{...}, x)`)"
    ),
    not_on=(
        "a different letter (`lower`/`upper`, `content`/`context`), a plural or suffix "
        "(`item`/`items`), case, digits or punctuation only (`int32`/`int64`, `utf-8`/`utf8`), "
        "spelling variants (`colour`/`color`, `cancelled`/`canceled`)"
    ),
    fires=(
        Example(
            file=File("enc/enc.go", "go", """\
package enc

func Decoder(encoding string) string {
	switch encoding {
	case "gzip", "deflate":
		return "zlib"
	case "defalte":
		return "zlib"
	}
	return ""
}
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("enc/enc.go", "go", """\
package enc

func Decoder(encoding string) string {
	switch encoding {
	case "gzip", "x-gzip", "deflate":
		return "zlib"
	}
	return ""
}
"""),
        ),
    ),
    by_record=True,
    record=Record(
        findings=7,
        holding=0,
        where=(
            "the whole trees of the tuning half's 26 projects and of 123 PyPI and npm packages (25 on 2026-12-06, "
            "98 on 2026-12-07): 7, none holds: labels of one case group sharing a body, both spellings accepted "
            "on purpose (eslint `case \"writeable\": case \"writable\":`; ioredis `case \"ssubscribe\": case "
            "\"subscribe\":` 2, Redis's sharded subscribe); two names both in use, each with its own branch "
            "(formidable `plugins/multipart.js:95`, `headersEnd` beside `headerEnd`, both emitted by its parser; "
            "luxon `impl/tokenParser.js:92`, the tokens `yyyyyy` and `yyyyy`; chardet's benchmark scripts 2, "
            "`cchardet` beside `chardet`, two libraries). Not one by design: express's `case 'referer': case "
            "'referrer':` (a known pair)"
        ),
    ),
)

RULES = (LITERAL_TYPO,)
RULE_LITERAL_TYPO = LITERAL_TYPO.id


_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO})
_NEEDLES = ("==", " in ", "case ", "includes(", "indexOf(", "Set(", "Contains(")
MIN_LENGTH = 5
MAX_LENGTH = 40
# Both spellings in use on purpose (HTTP's `Referer` header, misspelt in the standard).
_KNOWN_PAIRS = frozenset({frozenset({"referer", "referrer"})})

Literal = tuple[str, int]  # (text, line)


def slip(first: str, second: str) -> str | None:
    """How `second` is one slip from `first` ("swapped letters", "a letter left out"), or None."""
    if min(len(first), len(second)) < MIN_LENGTH or max(len(first), len(second)) > MAX_LENGTH:
        return None
    if first.lower() == second.lower() or frozenset({first.lower(), second.lower()}) in _KNOWN_PAIRS:
        return None
    letters = [re.sub(r"[^A-Za-z]", "", item).lower() for item in (first, second)]
    if letters[0] == letters[1]:
        return None  # digits or punctuation only
    if len(first) == len(second):
        differ = [index for index in range(len(first)) if first[index] != second[index]]
        if (
            len(differ) == 2
            and differ[1] == differ[0] + 1
            and first[differ[0]] == second[differ[1]]
            and first[differ[1]] == second[differ[0]]
            and first[differ[0]].isalpha()
            and first[differ[1]].isalpha()
        ):
            return "two letters swapped"
        return None
    shorter, longer = sorted((first, second), key=len)
    if len(longer) - len(shorter) != 1:
        return None
    for index in range(1, len(longer) - 1):  # not the first or last letter: a prefix or a suffix
        if longer[:index] + longer[index + 1 :] == shorter and longer[index].isalpha():
            added = longer[index]
            if added == "u" and longer[index + 1 : index + 2] == "r" and longer[index - 1] == "o":
                return None  # colour / color
            if added == "l" and (longer[index - 1] == "l" or longer[index + 1] == "l"):
                return None  # cancelled / canceled
            if not longer[index - 1].isalpha() or not longer[index + 1].isalpha():
                return None  # at a word boundary inside the literal: a prefix or suffix of a part
            return "one letter doubled or left out" if added in (longer[index - 1], longer[index + 1]) else "one letter left out"
    return None


def slips(literals: list[Literal]) -> Iterator[tuple[Literal, Literal, str]]:
    """(the literal that slipped, its sibling, how) in a set, the later one reported."""
    distinct = list(dict.fromkeys(literals))
    texts = {text for text, _line in distinct}
    for index, later in enumerate(distinct):
        for earlier in distinct[:index]:
            if later[0] == earlier[0]:
                continue
            how = slip(earlier[0], later[0])
            if how is not None and not _both_in_a_family(earlier[0], later[0], texts):
                yield later, earlier, how
                break


def _both_in_a_family(first: str, second: str, texts: set[str]) -> bool:
    """Both spellings used on purpose: a third literal in the set is also one slip from one of
    them (`'read'`, `'reads'`, `'reader'`... a family of names, not a typo)."""
    return sum(1 for text in texts if text not in (first, second) and (slip(first, text) or slip(second, text))) > 0


def _findings(sets: list[list[Literal]], text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    reported: set[int] = set()
    for literals in sets:
        for (typo, line), (sibling, sibling_line), how in slips(literals):
            if line in added and line not in reported:
                reported.add(line)
                yield _finding(path, text, line, typo, sibling, sibling_line, how)


def _finding(path: str, text: str, line: int, typo: str, sibling: str, sibling_line: int, how: str) -> Finding:
    code = code_line(text, line)
    where = "on the same line" if sibling_line == line else f"at line {sibling_line}"
    return bug_finding(
        rule=RULE_LITERAL_TYPO,
        category="correctness",
        title=f"`{typo}` is one slip from `{sibling}` in the same comparison",
        body=(
            f"{matched(code)}: `{typo}` is compared with the same value as `{sibling}` ({where}), and the "
            f"two differ by {how}. If it is a misspelling, that branch never matches the value it was "
            "written for and nothing fails; if both spellings are meant, a comment saying so helps the "
            "next reader."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _string(node: ast.AST) -> Literal | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, node.lineno
    return None


def _equality(node: ast.AST) -> tuple[str, Literal] | None:
    """(subject, literal) of `subject == 'literal'` or `!=`."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return None
    left, right = node.left, node.comparators[0]
    for subject, value in ((left, right), (right, left)):
        literal = _string(value)
        if literal is not None and _string(subject) is None:
            return ast.dump(subject), literal
    return None


def _python_sets(tree: ast.Module, added: dict[int, str]) -> list[list[Literal]]:
    """The sets of literals compared with one subject, from the nodes that span an added line: a
    set's literals lie within the node it is read from (an `if` chain's within its first `if`), so
    a node spanning none could only give sets with no literal on an added line, never reported.
    Leaving one out leaves its `elif`s out too: they lie within it."""
    sets: list[list[Literal]] = []
    chained: set[int] = set()  # `elif` tests already read as part of their chain
    spans = AddedSpans(added)
    nodes: list[ast.AST] = [
        node
        for kind in (ast.BoolOp, ast.Compare, ast.Match, ast.If)
        for node in nodes_of(tree, kind)
        if spans.touched(node.lineno, node.end_lineno or node.lineno)  # type: ignore[attr-defined]
    ]
    for node in sorted(nodes, key=lambda item: (getattr(item, "lineno", 0), getattr(item, "col_offset", 0))):
        if isinstance(node, ast.BoolOp):
            grouped: dict[str, list[Literal]] = {}
            for value in node.values:
                found = _equality(value)
                if found is not None:
                    grouped.setdefault(found[0], []).append(found[1])
            sets += [literals for literals in grouped.values() if len(literals) >= 2]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            container = node.comparators[0]
            if isinstance(container, (ast.Tuple, ast.List, ast.Set)):
                listed = [literal for item in container.elts if (literal := _string(item)) is not None]
                if len(listed) >= 2:
                    sets.append(listed)
        elif isinstance(node, ast.Match):
            cases = [
                literal
                for case in node.cases
                for pattern in ast.walk(case.pattern)
                if isinstance(pattern, ast.MatchValue) and (literal := _string(pattern.value)) is not None
            ]
            sets.append(cases)
        elif isinstance(node, ast.If) and id(node) not in chained:
            grouped = {}
            current: ast.If | None = node
            while current is not None:
                chained.add(id(current))
                found = _equality(current.test)
                if found is not None:
                    grouped.setdefault(found[0], []).append(found[1])
                orelse = current.orelse
                current = orelse[0] if len(orelse) == 1 and isinstance(orelse[0], ast.If) else None
            sets += [literals for literals in grouped.values() if len(literals) >= 2]
    return sets


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        # From the operator (a scan for `=`/`!` is quick); the subject is read back from it.
        "comparison": re.compile(r"[!=]==?\s*(?P<quote>['\"`])(?P<literal>[^'\"`\\\n]{5,40})(?P=quote)"),
        "reversed": re.compile(
            r"(?P<quote>['\"`])(?P<literal>[^'\"`\\\n]{5,40})(?P=quote)\s*[!=]==?\s*"
            r"(?P<subject>[A-Za-z_$][\w$]*(?:(?:\?\.|\.)[A-Za-z_$][\w$]*)*)"
        ),
        "switch": re.compile(r"\bswitch\b[^{;]*\{"),
        "case": re.compile(r"\bcase\s+"),
        "case_literal": re.compile(r"\s*,?\s*(?P<quote>['\"`])(?P<literal>[^'\"`\\\n]{1,40})(?P=quote)"),
        # A literal list tested for membership: `[...].includes(x)`, `new Set([...])`, Go's
        # `slices.Contains([]string{...}, x)`.
        "membership": re.compile(r"\]\s*\.\s*(?:includes|indexOf)\s*\(|new\s+Set\s*\(\s*\[|slices\.Contains\(\s*\[\]string\{"),
        "list_literal": re.compile(r"\s*(?P<quote>['\"`])(?P<literal>[^'\"`\\\n]{1,40})(?P=quote)\s*,?"),
    }


def _text_sets(text: str, go: bool) -> list[list[Literal]]:
    from reviewgate.reviewers.builtin.languages.expression_spans import operand_before
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.text_flow import functions, innermost

    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    by_subject: dict[str, list[tuple[str, int, int]]] = {}  # subject -> (literal, line, offset)
    for kind in ("comparison", "reversed"):
        for match in patterns[kind].finditer(text):
            quote = match.start("quote")
            if masked[quote] != text[quote] or masked[match.start()] != text[match.start()]:
                continue  # inside a string or a comment
            if kind == "comparison":
                at = operand_before(source, match.start())
                subject = masked[at : match.start()]
            else:
                at, subject = match.start("subject"), match.group("subject")
            subject = re.sub(r"\s+", "", subject)
            if subject and (subject[0].isalpha() or subject[0] in "_$"):
                by_subject.setdefault(subject, []).append((match.group("literal"), source.line_of(at), at))
    sets: list[list[Literal]] = []
    for compared in by_subject.values():
        if len(compared) < 2 or not any(slips([(literal, line) for literal, line, _at in compared])):
            continue
        # A slip among the file's comparisons of this subject: the set is those of one function.
        bodies = functions(source, go)
        grouped: dict[int, list[Literal]] = {}
        for literal, line, at in compared:
            function = innermost(bodies, at)
            grouped.setdefault(function.body_open if function else -1, []).append((literal, line))
        sets += [sorted(literals, key=lambda item: item[1]) for literals in grouped.values() if len(literals) >= 2]
    for membership in patterns["membership"].finditer(masked):
        if masked[membership.start()] == "]":
            opener = source.pairs.get(membership.start(), -1)
        else:
            opener = membership.end() - 1
        list_end = source.pairs.get(opener, -1)
        if opener < 0 or list_end < opener:
            continue
        listed: list[Literal] = []
        index = opener + 1
        while (item := patterns["list_literal"].match(text, index, list_end)) is not None:
            listed.append((item.group("literal"), source.line_of(item.start("literal"))))
            index = item.end()
        if len(listed) >= 2 and not masked[index:list_end].strip():  # strings only
            sets.append(listed)
    for switch in patterns["switch"].finditer(masked):
        opener = switch.end() - 1
        closer = source.pairs.get(opener)
        if closer is None:
            continue
        literals: list[Literal] = []
        for case in patterns["case"].finditer(masked, opener, closer):
            index = case.end()
            while (label := patterns["case_literal"].match(text, index)) is not None:
                literals.append((label.group("literal"), source.line_of(label.start("literal"))))
                index = label.end()
        if len(literals) >= 2:
            sets.append(literals)
    return sets


LITERAL_TYPO_LENS = TwoReaderLens(RULE_LITERAL_TYPO, _LANGUAGES, _NEEDLES,
                                  lambda tree, text, path, added: _findings(_python_sets(tree, added), text, path, added),
                                  lambda text, path, added, language: _findings(_text_sets(text, language is Language.GO), text, path, added))

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (LITERAL_TYPO_LENS,)
