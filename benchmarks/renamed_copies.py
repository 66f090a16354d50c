"""Does the DRY lens find real code copied under new names? One command:

    python benchmarks/renamed_copies.py [REPOSITORY] [--count 30] [--seed 13]

REPOSITORY is a directory of Python code (a git checkout or an unpacked source distribution);
without it, the Django 5.2.19 source distribution is downloaded to benchmarks/.cache/ with
`pip download --no-binary :all: --no-deps 'django==5.2.19'` and unpacked there.

From the files the lens indexes (code, not tests), `--count` function and method definitions of
at least 8 lines are chosen with a fixed seed. Each is copied into one new module on a branch with
every name it binds renamed consistently (its own name, parameters, locals; attribute names and the
names it uses from elsewhere stay, as they must for the copy to still work), the way a developer
copies a function and adapts it. The builtin reviewer then reviews the branch, and a copy counts
as found when a reuse finding on its lines names the original's file. It prints two figures: over
every definition drawn, and over those within the lens's size bar (at least MIN_LINES non-empty
lines and MIN_CHARACTERS characters once normalized, or MIN_DEFINITION_CHARACTERS for a whole
definition with MIN_SUBSTANCE decisions, calls and operators: `lenses/duplication/sizes.py`), the
smallest copy it declares it reports; a definition of 8 lines may be under it (a docstring and 3
lines of plain code).

The same run also measures a clean change: the definitions that follow the chosen ones are
removed at the base and the branch restores them (real code, copied from nowhere); every DRY
finding there is a false positive. Last, the DRY lens alone is timed on the copies branch with an
empty index cache and with the cache it just filled.
"""

from __future__ import annotations

import argparse
import ast
import io
import keyword
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO_ROOT = BENCHMARKS.parent
CACHE = BENCHMARKS / ".cache"
MIN_DEFINITION_LINES = 8
COPIES_FILE = "renamed_copies_module.py"

sys.path.insert(0, str(REPO_ROOT))

from benchmarks.measure import DJANGO_RELEASE, DJANGO_VERSION, IDENTIFIER_WORDS  # noqa: E402
from reviewgate.context import ReviewRequest  # noqa: E402
from reviewgate.findings import Finding  # noqa: E402
from reviewgate.freeze.freeze import freeze  # noqa: E402
from reviewgate.freeze.git import TreeReader  # noqa: E402
from reviewgate.reviewers.builtin import BuiltinReviewer  # noqa: E402
from reviewgate.reviewers.builtin.language_table import language_of  # noqa: E402
from reviewgate.reviewers.builtin.lenses.duplication.candidate_files import is_candidate  # noqa: E402
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import normalized_lines  # noqa: E402
from reviewgate.reviewers.builtin.lenses.duplication.lens import DuplicationLens  # noqa: E402
from reviewgate.reviewers.builtin.lenses.duplication.sizes import (  # noqa: E402
    MIN_CHARACTERS,
    MIN_DEFINITION_CHARACTERS,
    MIN_LINES,
    MIN_SUBSTANCE,
)
from reviewgate.reviewers.builtin.lenses.duplication.substance import substance  # noqa: E402
from testing.lenses import gate_cache  # noqa: E402
from testing.repo import GIT_IDENTITY  # noqa: E402


@dataclass(frozen=True)
class Definition:
    path: str
    first: int  # the `def` line (decorators are left behind)
    last: int
    name: str


def _git(repo: Path, *args: str) -> str:
    environment = {**os.environ, **GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}
    completed = subprocess.run(["git", *args], cwd=repo, env=environment, capture_output=True, text=True, check=True)
    return completed.stdout.strip()


def _django_source() -> Path:
    unpacked = sorted(CACHE.glob(f"django-{DJANGO_VERSION}/django"))
    if unpacked:
        return unpacked[-1].parent
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                    DJANGO_RELEASE, "-d", str(CACHE)], check=True)
    archive = sorted(CACHE.glob(f"django-{DJANGO_VERSION}.tar.gz"))[-1]
    with tarfile.open(archive) as handle:
        handle.extractall(CACHE, filter="data")
    return sorted(CACHE.glob(f"django-{DJANGO_VERSION}/django"))[-1].parent


def _definitions(root: Path, paths: list[str]) -> list[Definition]:
    found = []
    for path in paths:
        try:
            text = (root / path).read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = text.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                if node.end_lineno - node.lineno + 1 >= MIN_DEFINITION_LINES and _dedents(
                    lines[node.lineno - 1 : node.end_lineno]
                ):
                    found.append(Definition(path, node.lineno, node.end_lineno, node.name))
    return found


def _dedents(lines: list[str]) -> bool:
    """Whether every line is indented at least as the first: a string running back to column 0
    would keep a method from standing alone as a function."""
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    return all(line.startswith(indent) or not line.strip() for line in lines)


def _bound_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a definition binds itself: renaming them keeps the copy working."""
    names = {function.name}
    declared_elsewhere: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared_elsewhere.update(node.names)
    return names - declared_elsewhere - {"self", "cls"}


def _domain_words(bound: list[str], rng: random.Random) -> dict[str, str]:
    """The first generator's names: a plain domain word and a number each (`total_3`)."""
    words = rng.sample(IDENTIFIER_WORDS, len(IDENTIFIER_WORDS))
    return {name: f"{words[index % len(words)]}_{index}" for index, name in enumerate(bound)}


# The second generator's habits: how another developer names what they copy.
ABBREVIATIONS = {
    "request": "req", "response": "resp", "value": "val", "values": "vals", "number": "num", "index": "idx",
    "message": "msg", "config": "cfg", "settings": "cfg", "connection": "conn", "result": "res",
    "object": "obj", "field": "fld", "model": "mdl", "string": "str_", "count": "cnt", "kwargs": "kw",
    "args": "argv", "name": "nm", "path": "pth", "error": "err", "exception": "exc", "template": "tpl",
    "context": "ctx", "instance": "inst", "query": "qry", "params": "prms", "data": "dat", "url": "uri",
}
HABITS = ("camel", "prefix", "abbreviated")
PREFIXES = ("my_", "new_", "the_", "local_")


def _words_of(name: str) -> list[str]:
    """`total_price`, `totalPrice` and `_total_price` all as ["total", "price"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [word.lower() for word in spaced.split("_") if word]


def _habit_names(bound: list[str], rng: random.Random) -> dict[str, str]:
    """The second generator's names: one habit per copy. camelCase for snake_case (and back),
    a prefix on every name, or the words abbreviated (`request` -> `req`, else without their
    inner vowels). A name the habit leaves as it was gets a suffix, so every bound name changes."""
    habit = rng.choice(HABITS)
    prefix = rng.choice(PREFIXES)
    renaming: dict[str, str] = {}
    for name in bound:
        words = _words_of(name) or [name]
        if habit == "camel":
            new = "_".join(words) if any(char.isupper() for char in name) else (
                words[0] + "".join(word.capitalize() for word in words[1:]) if len(words) > 1 else words[0] + "Val")
        elif habit == "prefix":
            new = prefix + "_".join(words)
        else:
            new = "_".join(ABBREVIATIONS.get(word) or (word[0] + re.sub("[aeiou]", "", word[1:]) or word) for word in words)
        if new == name or not new.isidentifier() or keyword.iskeyword(new) or new in renaming.values():
            new = f"{new}_{len(renaming)}"
        renaming[name] = new
    return renaming


def _swapped_statements(text: str, rng: random.Random) -> str:
    """The text with one pair of adjacent one-line statements swapped where neither reads what the
    other binds (independent, so the copy still works): another order of the same steps."""
    function = ast.parse(text).body[0]
    pairs = []
    for node in ast.walk(function):
        for body in (getattr(node, field, None) for field in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            for first, second in zip(body, body[1:], strict=False):
                # Assignments to plain names only: an attribute or an item stored may be what the
                # other statement reads.
                if not all(isinstance(item, ast.Assign | ast.AugAssign | ast.AnnAssign)
                           and item.lineno == item.end_lineno
                           and all(isinstance(target, ast.Name) for target in _targets(item))
                           for item in (first, second)):
                    continue
                stored = [{n.id for n in ast.walk(item) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
                          for item in (first, second)]
                loaded = [{n.id for n in ast.walk(item) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
                          for item in (first, second)]
                if not (stored[0] & (loaded[1] | stored[1]) or stored[1] & loaded[0]):
                    pairs.append((first.lineno, second.lineno))
    if not pairs:
        return text
    first, second = rng.choice(pairs)
    lines = text.splitlines(keepends=True)
    lines[first - 1], lines[second - 1] = lines[second - 1], lines[first - 1]
    return "".join(lines)


def _targets(statement: ast.Assign | ast.AugAssign | ast.AnnAssign) -> list[ast.expr]:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]


def _changed_literal(token: tokenize.TokenInfo) -> str | None:
    """Another value for a literal a developer tunes in a copy: a number over 1 doubled, a message
    (a plain string of several words) reworded. None: left as it is."""
    if token.type == tokenize.NUMBER and token.string.isdigit() and int(token.string) > 1:
        return str(int(token.string) * 2)
    if token.type == tokenize.STRING and token.string[:1] in "\"'" and token.string[:3] not in ('"""', "'''"):
        quote, body = token.string[0], token.string[1:-1]
        if " " in body and "{" not in body and "%" not in body:
            return f"{quote}Note: {body}{quote}"
    return None


def _renamed(source_lines: list[str], definition: Definition, rng: random.Random, generator: str = "words") -> str:
    """The definition's text with every name it binds replaced by a new one, dedented. The `habits`
    generator also swaps a pair of independent statements and changes numbers and messages."""
    text = textwrap.dedent("".join(source_lines[definition.first - 1 : definition.last]))
    if generator == "habits":
        text = _swapped_statements(text, rng)
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
    bound = sorted(_bound_names(function))
    renaming = _habit_names(bound, rng) if generator == "habits" else _domain_words(bound, rng)
    # Keyword arguments name the callee's parameters, not this definition's names: they stay.
    keywords = {(node.lineno, node.col_offset) for node in ast.walk(function)
                if isinstance(node, ast.keyword) and node.arg is not None}
    replacements: dict[int, list[tuple[int, int, str]]] = {}
    previous = ""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        (row, column), (_, end) = token.start, token.end
        if (token.type == tokenize.NAME and token.string in renaming and previous != "."
                and token.start not in keywords):
            replacements.setdefault(row, []).append((column, end, renaming[token.string]))
        elif generator == "habits" and token.start[0] == token.end[0] and (literal := _changed_literal(token)):
            replacements.setdefault(row, []).append((column, end, literal))
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.string
    lines = text.splitlines(keepends=True)
    for row, spans in replacements.items():
        line = lines[row - 1]
        for column, end, name in sorted(spans, reverse=True):  # right to left: columns stay true
            line = line[:column] + name + line[end:]
        lines[row - 1] = line
    renamed = "".join(lines)
    ast.parse(renamed)  # still Python
    return renamed


def _under_the_size_bar(repo: Path, definition: Definition) -> str | None:
    """Why `definition` is smaller than any copy the lens reports (its normalized size), or None."""
    lines = (repo / definition.path).read_text(encoding="utf-8").split("\n")[definition.first - 1 : definition.last]
    normalized = normalized_lines("\n".join(lines), language_of(definition.path))
    characters, code_lines = sum(map(len, normalized)), sum(1 for line in normalized if line)
    dense = substance("".join(normalized))
    # A drawn definition is copied whole: under MIN_CHARACTERS it is within the bar when dense.
    if code_lines >= MIN_LINES and (characters >= MIN_CHARACTERS or (
            characters >= MIN_DEFINITION_CHARACTERS and dense >= MIN_SUBSTANCE)):
        return None
    return (f"under the size bar: {code_lines} lines, {characters} characters normalized, "
            f"{dense} decisions, calls and operators")


def _review(repo: Path, base: str, head: str) -> list[Finding]:
    target = freeze(repo, base=base, head=head)
    request = ReviewRequest(target=target, head=TreeReader(repo, target.head_sha), cache=gate_cache(repo))
    return list(BuiltinReviewer().review(request).findings)


def _dry(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.rule.startswith("reuse/")]


def _time_lens(repo: Path, base: str, head: str) -> float:
    target = freeze(repo, base=base, head=head)
    request = ReviewRequest(target=target, head=TreeReader(repo, target.head_sha), cache=gate_cache(repo))
    clock = time.perf_counter()
    list(DuplicationLens().check(request))
    return time.perf_counter() - clock


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repository", nargs="?", type=Path, help="a directory of Python code (default: Django 5.2)")
    parser.add_argument("--count", type=int, default=30, help="definitions to copy (default 30)")
    parser.add_argument("--seed", type=int, default=13, help="seed of the choice and the new names (default 13)")
    parser.add_argument("--generator", choices=("words", "habits"), default="words",
                        help="how the copies are renamed: `words` (a domain word and a number per name, the default) "
                             "or `habits` (camelCase for snake_case and back, a prefix, or abbreviations; a pair of "
                             "independent statements swapped; numbers and messages changed)")
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it (to look at the copies)")
    options = parser.parse_args()
    source = options.repository or _django_source()
    if not source.is_dir():
        parser.error(f"repository {source}: not a directory")
    rng = random.Random(options.seed)
    with tempfile.TemporaryDirectory(prefix="renamed-copies-") as temporary:
        repo = options.keep or Path(temporary) / "repo"
        if repo.exists():
            parser.error(f"--keep {repo}: already exists")
        shutil.copytree(source, repo, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        paths = sorted(str(path.relative_to(repo)) for path in repo.rglob("*.py"))
        paths = [path for path in paths if is_candidate(path)]
        definitions = _definitions(repo, paths)
        # Outermost definitions only, so a planted copy never contains another planted one.
        definitions = [d for d in definitions if not any(
            o.path == d.path and o.first < d.first and d.last <= o.last for o in definitions)]
        if len(definitions) < 2 * options.count:
            parser.error(f"repository {source}: only {len(definitions)} definitions of "
                         f"{MIN_DEFINITION_LINES}+ lines, need {2 * options.count}")
        chosen = sorted(rng.sample(definitions, 2 * options.count), key=lambda d: (d.path, d.first))
        planted, removed = chosen[0::2], chosen[1::2]

        # The clean change: `removed` is gone at its base, and the branch brings it back.
        originals = {path: (repo / path).read_text(encoding="utf-8") for path in {d.path for d in removed}}
        for path, text in originals.items():
            lines = text.splitlines(keepends=True)
            for definition in sorted((d for d in removed if d.path == path), key=lambda d: -d.first):
                indent = lines[definition.first - 1][: len(lines[definition.first - 1]) - len(lines[definition.first - 1].lstrip())]
                lines[definition.first - 1 : definition.last] = [f"{indent}pass\n"]
            (repo / path).write_text("".join(lines), encoding="utf-8")
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "without some definitions")
        clean_base = _git(repo, "rev-parse", "HEAD")
        for path, text in originals.items():
            (repo / path).write_text(text, encoding="utf-8")
        _git(repo, "commit", "-q", "-a", "-m", "the definitions back")
        main_sha = _git(repo, "rev-parse", "HEAD")

        # The copies: one new module holding every planted definition under new names.
        blocks, spans = [], []
        line = 1
        for definition in planted:
            source_lines = (repo / definition.path).read_text(encoding="utf-8").splitlines(keepends=True)
            block = _renamed(source_lines, definition, rng, options.generator)
            count = block.count("\n")
            spans.append((line, line + count - 1))
            blocks.append(block + "\n\n")
            line += count + 2
        copies_path = f"{planted[0].path.split('/')[0]}/{COPIES_FILE}"
        (repo / copies_path).write_text("".join(blocks), encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "renamed copies")
        copies_head = _git(repo, "rev-parse", "HEAD")

        findings = _dry(_review(repo, main_sha, copies_head))
        found = found_within = within = 0
        for definition, (first, last) in zip(planted, spans, strict=True):
            hit = any(
                finding.path == copies_path and finding.line is not None
                and finding.line <= last and (finding.end_line or finding.line) >= first
                and definition.path in finding.title + finding.body
                for finding in findings
            )
            found += hit
            under = _under_the_size_bar(repo, definition)
            within += under is None
            found_within += hit and under is None
            print(f"  {'found ' if hit else 'MISSED'} {definition.path}:{definition.first}-{definition.last} "
                  f"{definition.name} ({definition.last - definition.first + 1} lines{'; ' + under if under else ''})")
        stray = [finding for finding in findings if not any(
            finding.line is not None and first <= finding.line <= last for first, last in spans)]
        clean = _dry(_review(repo, clean_base, main_sha))
        for finding in clean + stray:
            print(f"  false positive: {finding.severity.value} {finding.path}:{finding.line} {finding.title}")
        shutil.rmtree(repo / ".reviewgate-cache", ignore_errors=True)
        cold = _time_lens(repo, main_sha, copies_head)
        warm = _time_lens(repo, main_sha, copies_head)
        print(f"renamed copies found: {found}/{len(planted)} ({source}, generator {options.generator}); "
              f"within the lens's size bar ({MIN_LINES} lines, {MIN_CHARACTERS} characters normalized; a whole "
              f"definition from {MIN_DEFINITION_CHARACTERS} with {MIN_SUBSTANCE} decisions, calls and operators): "
              f"{found_within}/{within}")
        print(f"DRY findings on the clean change (+{sum(d.last - d.first + 1 for d in removed)} real lines): "
              f"{len(clean)}; outside the planted copies: {len(stray)}")
        print(f"DRY lens on the copies branch: {cold:.2f} s with an empty index cache, {warm:.2f} s warm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
