"""Ruby's and PHP's sinks reached from a caller: the method a sink is in builds its text from a
parameter, and a call of the method hands request input to that parameter, up to two calls up
(a controller's action, the model method it calls, the helper that method calls).

What is a method: Ruby's `def name(…)` (`def self.name` on the class) and Active Record's
`scope :name, ->(…) { … }`; PHP's `function name(…)` (`static` on the class). What is a call of it:
in its own file, the name called bare or on `self`, `$this`, `self::` or `static::`, or on its
class; in another Ruby or PHP file of the change, the name called on its class (`Benefits.save(…)`,
`User::find(…)`), or, for a method of an instance, on any receiver in a file that names the class
(`$this->model->getUser(…)` beside `use App\\Model\\User`); a PHP function outside a class, anywhere.
Test files are fixtures and call nothing that ships. A scanner over the live code
(languages/ruby_php_text.py), not a parser: a name another class also defines can be taken for
this one's, which only matters where request input is then handed to it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.languages.ruby_php_text import argument_spans, live_code
from reviewgate.reviewers.builtin.lenses.security.ruby_php import (
    CallersChain,
    method_chain,
    parameter_reaches,
    request_sources,
    starts_a_method,
)
from reviewgate.reviewers.builtin.lenses.security.ruby_php_sinks import RUBY_ARGUMENTS, arguments_text

# How many calls up a chain is followed.
_MAX_CALLS = 2
# How many calls of one method are read (a name called everywhere is read no further).
_MAX_CALLS_READ = 200
# How far above a sink its method's header is looked for.
_WINDOW_LINES = 200

_RUBY_DEF = LazyPattern(r"^\s*def\s+(?:(?P<self>self)\.)?(?P<name>\w+[?!]?)\s*(?:\((?P<parenthesized>.*)|(?P<bare>[^\n;#(]*))")
_RUBY_SCOPE = LazyPattern(r"^\s*scope\s+:(?P<name>\w+[?!]?)\s*,\s*(?:->\s*\((?P<arrow>[^)]*)\)|(?:lambda|proc)\s*(?:\{|do)\s*\|(?P<block>[^|]*)\|)")
_PHP_FUNCTION = LazyPattern(
    r"^\s*(?P<modifiers>(?:(?:public|private|protected|static|final|abstract)\s+)*)function\s+&?\s*(?P<name>\w+)\s*\((?P<parenthesized>.*)"
)
_CLASS = {
    Language.RUBY: LazyPattern(r"^\s*(?:class|module)\s+(?:\w+::)*(?P<name>[A-Z]\w*)"),
    Language.PHP: LazyPattern(r"^\s*(?:(?:abstract|final|readonly)\s+)*(?:class|trait)\s+(?P<name>\w+)"),
}
_WORD = re.compile(r"\w+")
# A member of a parameter read through a method (`criteria.period`, `$form->getTitle()`): what the
# object answers is not followed up to the object's own callers.
_MEMBER = re.compile(r"[$@]?\w+\s*(?:\.|->)\s*\w+[?!]?(?:\(\s*\))?")


@dataclass(frozen=True)
class Method:
    """The method a sink is in: its name, its parameters by position ("" where one is not a plain
    name: a splat, a block), its Ruby keyword parameters, its class, and its header's line index."""

    name: str
    parameters: tuple[str, ...]
    keywords: tuple[str, ...]
    owner: str
    on_the_class: bool
    header: int


class SourceFile:
    """One Ruby or PHP file, read once for every sink of the change that asks."""

    def __init__(self, path: str, text: str, language: Language, live: list[str] | None = None) -> None:
        self.path = path
        self.text = text
        self.language = language
        self.lines = text.split("\n")
        if live is not None:  # the sink's own file, already read by ruby_php.findings
            self.__dict__["live"] = live
        self.methods: dict[int, Method] = {}  # by header line index, each read once

    @cached_property
    def live(self) -> list[str]:
        return live_code(self.text, self.language).split("\n")

    @cached_property
    def headers(self) -> list[int]:
        """The line indexes of the file's method headers (Ruby's `def` and scopes, PHP's functions)."""
        patterns = (_RUBY_DEF, _RUBY_SCOPE) if self.language is Language.RUBY else (_PHP_FUNCTION,)
        return [index for index, line in enumerate(self.live)
                if ("def" in line or "scope" in line or "function" in line)
                and any(pattern.compiled().match(line) for pattern in patterns)]

    @cached_property
    def classes(self) -> list[int]:
        """The line indexes of the file's class (and Ruby module) declarations."""
        pattern = _CLASS[self.language].compiled()
        return [index for index, line in enumerate(self.live) if pattern.match(line)]

    @cached_property
    def depth(self) -> list[int]:
        """How many braces are open before each line (PHP's classes hold their methods in them)."""
        depths, open_now = [], 0
        for line in self.live:
            depths.append(open_now)
            open_now += line.count("{") - line.count("}")
        return depths

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(_WORD.findall(self.text))

    @cached_property
    def sources(self) -> re.Pattern[str]:
        return request_sources(self.text, self.language, self.path).compiled()


class Callers:
    """The chains through callers of one review's Ruby and PHP files (`files` gives the change's
    others by path, with their text, when a sink first asks)."""

    def __init__(self, files: Callable[[], Iterable[tuple[str, str | None]]]) -> None:
        self._files = files
        self._read: dict[str, SourceFile] | None = None
        # The calls of a method (its file and header) in a file, found once for all its parameters.
        self._sites: dict[tuple[str, str, int], list[tuple[int, int, bool]]] = {}

    def chain_for(self, path: str, text: str, language: Language) -> CallersChain:
        """What ruby_php.findings asks for a sink of the file at `path` (its text `text`)."""
        def chain(number: int, run: str, written: str, rule: str, live: list[str]) -> str | None:
            here = self._file(path, text, language, live)
            return self._through_a_caller(here, number, run, written, rule, 1)

        return chain

    def _file(self, path: str, text: str, language: Language, live: list[str]) -> SourceFile:
        files = self._all()
        if path not in files or files[path].text != text:
            files[path] = SourceFile(path, text, language, live)
        return files[path]

    def _all(self) -> dict[str, SourceFile]:
        if self._read is None:
            self._read = {}
            for path, text in self._files():
                language = language_of(path)
                if text is not None and language in (Language.RUBY, Language.PHP) and not is_test_file(path):
                    self._read[path] = SourceFile(path, text, language)
        return self._read

    def _through_a_caller(self, here: SourceFile, number: int, run: str, written: str, rule: str, depth: int) -> str | None:
        """How request input reaches `run` (on line `number` of `here`) through a parameter of its
        method that a caller fills with it, up to `_MAX_CALLS` calls up."""
        method = enclosing_method(here, number)
        if method is None:
            return None
        for parameter in (*method.parameters, *method.keywords):
            if not parameter or not parameter_reaches(here.lines, here.live, method.header, parameter, number, run, written,
                                                      here.language, rule):
                continue
            for caller, line, argument, argument_written in self._arguments(here, method, parameter):
                handed = method_chain(argument, argument_written, caller.lines, caller.live, line, caller.language, rule,
                                      caller.sources)
                if handed is None and depth < _MAX_CALLS and not _MEMBER.fullmatch(argument.strip()):
                    handed = self._through_a_caller(caller, line, argument, argument_written, rule, depth + 1)
                if handed is not None:
                    where = f"line {line}" if caller is here else f"{caller.path}:{line}"
                    return f"{handed}, handed to `{method.name}` as `{parameter}` at {where}"
        return None

    def _arguments(self, here: SourceFile, method: Method, parameter: str) -> Iterator[tuple[SourceFile, int, str, str]]:
        """Each call of `method` with what it hands `parameter`: the caller's file, the call's line,
        and the argument's live code and text as written."""
        files = self._all()
        candidates = [here, *(other for path, other in files.items() if path != here.path and other.language is here.language)]
        read = 0
        for caller in candidates:
            if method.name not in caller.words or (caller is not here and method.owner and method.owner not in caller.words):
                continue
            key = (caller.path, here.path, method.header)
            sites = self._sites.get(key)
            if sites is None:
                sites = self._sites[key] = list(_calls(caller, method, caller is here))
            for line, opener, parenthesized in sites:
                read += 1
                if read > _MAX_CALLS_READ:
                    return
                found = _argument(caller, line, opener, parenthesized, method, parameter)
                if found is not None:
                    yield caller, line, *found


def enclosing_method(file: SourceFile, number: int) -> Method | None:
    """The method holding line `number` of `file`: the nearest header above it (a Ruby scope on
    the line itself or above), or None."""
    first = max(0, number - 1 - _WINDOW_LINES)
    for index in reversed(file.headers[: bisect.bisect_right(file.headers, number - 1)]):
        if index < first:
            break
        method = file.methods.get(index)
        if method is None:
            method = file.methods[index] = _read_header(file, index)
        if index < number - 1 or number == 1 or _is_scope(file, index):
            return method
    return None


def _is_scope(file: SourceFile, index: int) -> bool:
    """Whether the header on `index` is a Ruby scope lambda (whose body may be on its own line)."""
    return file.language is Language.RUBY and _RUBY_SCOPE.compiled().match(file.live[index]) is not None


def _read_header(file: SourceFile, index: int) -> Method:
    """The method whose header is on line index `index`."""
    line = file.live[index]
    if file.language is Language.RUBY:
        scope = _RUBY_SCOPE.compiled().match(line)
        if scope is not None:
            listed = scope.group("arrow") if scope.group("arrow") is not None else scope.group("block")
            return _method(file, scope.group("name"), listed or "", index, on_the_class=True)
        header = _RUBY_DEF.compiled().match(line)
        assert header is not None
        parenthesized = header.group("parenthesized") is not None
        listed = _closed(file, index, header.start("parenthesized")) if parenthesized else header.group("bare") or ""
        return _method(file, header.group("name"), listed, index, on_the_class=header.group("self") is not None)
    header = _PHP_FUNCTION.compiled().match(line)
    assert header is not None
    return _method(file, header.group("name"), _closed(file, index, header.start("parenthesized")), index,
                   on_the_class="static" in header.group("modifiers"))


def _closed(file: SourceFile, index: int, start: int) -> str:
    """A parameter list from column `start` of line index `index` (just after its `(`) to its `)`."""
    text, _written = arguments_text(file.lines, file.live, index + 1, start, parenthesized=True)
    spans = argument_spans(text)
    return text[: spans[-1][1]] if spans else ""


def _method(file: SourceFile, name: str, listed: str, header: int, on_the_class: bool) -> Method:
    parameters: list[str] = []
    keywords: list[str] = []
    splat = False
    for start, end in argument_spans(listed + ")"):
        declared = listed[start:end].strip()
        if file.language is Language.PHP:
            variable = re.search(r"(\.\.\.)?\s*&?\s*(\$\w+)", declared)
            splat = splat or variable is None or variable.group(1) is not None
            parameters.append("" if splat or variable is None else variable.group(2))
            continue
        keyword = re.match(r"(\w+):", declared)
        if keyword is not None:
            keywords.append(keyword.group(1))
            continue
        plain = re.match(r"(\w+)\s*(?:=|$)", declared)
        splat = splat or plain is None
        parameters.append("" if splat or plain is None else plain.group(1))
    return Method(name, tuple(parameters), tuple(keywords), _owner(file, header), on_the_class, header)


def _owner(file: SourceFile, header: int) -> str:
    """The class (or Ruby module) the method on line index `header` is declared in, or ""."""
    for index in reversed(file.classes[: bisect.bisect_right(file.classes, header)]):
        if file.language is Language.RUBY:  # the class's body is indented under it
            indent = len(file.live[index]) - len(file.live[index].lstrip())
            inside = len(file.live[header]) - len(file.live[header].lstrip()) > indent
        else:  # its braces are still open at the method
            inside = file.depth[header] > file.depth[index]
        if inside:
            found = _CLASS[file.language].compiled().match(file.live[index])
            return found.group("name") if found is not None else ""
    return ""


def _call_pattern(method: Method, language: Language, own_file: bool) -> re.Pattern[str]:
    """Where `method` is called: bare or on the object itself in its own file, on its class, and
    for a method of an instance on any receiver (the caller's file names the class)."""
    name = re.escape(method.name)
    receivers = []
    if method.owner:
        receivers.append(re.escape(method.owner) + (r"\s*::\s*" if language is Language.PHP else r"\s*\.\s*"))
    if language is Language.PHP:
        if own_file:
            receivers.append(r"(?:\$this\s*->|(?:self|static|parent)\s*::)\s*")
        if not method.on_the_class and method.owner:
            receivers.append(r"->\s*")
        bare = not method.owner
        before = r"(?<![\w>:$\\])"
        after = r"\s*\("
    else:
        if own_file:
            receivers.append(r"self\s*\.\s*")
        if not method.on_the_class:
            receivers.append(r"\.\s*")
        bare = own_file or not method.on_the_class
        before = r"(?<![\w.:@$])"
        after = RUBY_ARGUMENTS
    choices = [rf"(?:{receiver}){name}" for receiver in receivers]
    if bare:
        choices.append(before + name)
    return re.compile(rf"(?:{'|'.join(choices)})(?![\w?!])(?P<open>{after})")


def _calls(file: SourceFile, method: Method, own_file: bool) -> Iterator[tuple[int, int, bool]]:
    """Each call of `method` in `file`: its line, the column after its `(` (or after the name, for
    Ruby's call without parentheses), and whether it has parentheses."""
    pattern = _call_pattern(method, file.language, own_file)
    if pattern.search(file.text) is None:
        return  # no call in the text as written: its live code need not be read
    for index, line in enumerate(file.live):
        if method.name not in line or starts_a_method(line, file.language):
            continue
        for match in pattern.finditer(line):
            yield index + 1, match.end(), match.group("open").rstrip().endswith("(")


def _argument(file: SourceFile, line: int, opener: int, parenthesized: bool, method: Method,
              parameter: str) -> tuple[str, str] | None:
    """What a call (its arguments from column `opener` of `line`) hands `parameter`, live and as
    written: by position, or by name for a Ruby keyword parameter."""
    live, written = arguments_text(file.lines, file.live, line, opener, parenthesized)
    spans = argument_spans(live)
    if parameter in method.keywords:
        for start, end in spans:
            named = re.match(rf"\s*{re.escape(parameter)}:\s*", live[start:end])
            if named is not None:
                return live[start + named.end() : end], written[start + named.end() : end]
        return None
    positional = [(start, end) for start, end in spans if not re.match(r"\s*\w+:\s", live[start:end])]
    index = method.parameters.index(parameter)
    if index >= len(positional):
        return None
    start, end = positional[index]
    return live[start:end], written[start:end]
