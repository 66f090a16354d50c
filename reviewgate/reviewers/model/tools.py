"""The reviewer's read-only tools, for the API providers' tool loop (tool_loop.py): `read` a file,
a line range or a directory's names at the head or the merge base, `search` the frozen tree for a
fixed string or a regex, the `definition` and the `callers` of a symbol.

Every byte comes from the frozen git objects the review reads (TreeReader, `git grep` on the
commit), never the working tree. A path is validated as a finding's is (placement.clean_path: no
absolute path, `..`, backslash or NUL). Refused, and recorded: a withheld path (withheld.py),
and the branch's agent configuration and instruction files at the head (`.claude/`, `.codex/`,
`.mcp.json`, `CLAUDE.md`, `AGENTS.md`): the branch under review may not speak to its reviewer;
their merge-base versions may be read. No shell, no network, no write. Each result is cut at
MAX_RESULT_CHARS and redacted line by line like the context; the loop bounds the total.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath
from typing import Any

from reviewgate.cache_keys import text_digest
from reviewgate.context import ReviewRequest
from reviewgate.freeze.exclusions import LOCK_FILES
from reviewgate.freeze.git import TreeReader, run_git
from reviewgate.reviewers.model.placement import InvalidPath, clean_path
from reviewgate.reviewers.model.prompt import ToolCall, ToolSpec
from reviewgate.reviewers.model.redaction import redact_line
from reviewgate.reviewers.model.snapshot import AGENT_SETTINGS_NAMES, is_agent_settings
from reviewgate.reviewers.model.symbols import Site, UseReader, grep_tree
from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.text import printable

MAX_ARGUMENT_CHARS = 500  # of a call's recorded name and argument values
MAX_RESULT_CHARS = 12_000  # one call's answer; the loop's tool_bytes bounds them all
# How an answer points the model at another call: it was cut, or `callers` names uses it did not show.
CUT_NOTE = f"\n… (cut at {MAX_RESULT_CHARS:,} characters: ask for a narrower range)"
MORE_USES = "not shown: {count} more use(s) of {symbol} (read them with `read`):\n"
_MORE_USES_LEAD = MORE_USES.split("{", 1)[0]
MAX_READ_LINES = 400
MAX_SEARCH_HITS = 60
MAX_CALLERS = 40
CALLER_EXCERPT_CHARS = 8_000  # of a `callers` answer: excerpts; the rest of the sites are named
MAX_DEFINITIONS = 5
MAX_LINE_CHARACTERS = 300
SITE_LINES = 2
DEFINITION_LINES = 30
# The agent settings the command reviewer's snapshot takes from the merge base (one list, in
# snapshot.py), left out of every search of the head tree; what git's pathspecs miss (a
# look-alike spelling) `agent_file` filters from the hits.
_AGENT_EXCLUDES = [f":(exclude,glob,icase){pattern}" for name in sorted(AGENT_SETTINGS_NAMES)
                   for pattern in (f"**/{name}", f"**/{name}/**")]
SIDES = ("head", "base")

_PATH = {"type": "string", "description": "a repository path, as in the diff (no leading /)"}
_SIDE = {"type": "string", "enum": list(SIDES), "description": "head: after the change (default); base: before it"}
_SYMBOL = {"type": "string", "description": "a function, class or variable name, without its module"}
_SIDE_AGAIN = {"type": "string", "enum": list(SIDES)}
SPECS = (
    ToolSpec("read", "Read a file of the repository, or a range of its lines, at the head or the merge base; "
             "a directory (`.` the top): the names in it.",
             {"type": "object", "additionalProperties": False, "required": ["path"],
              "properties": {"path": _PATH, "side": _SIDE,
                             "start_line": {"type": "integer", "minimum": 1},
                             "end_line": {"type": "integer", "minimum": 1}}}),
    # The side and the symbol are described once, where first offered: the same words again in
    # the next tool were paid on every request.
    ToolSpec("search", "Search the files at the head (or the merge base) for a fixed string, or an extended regular "
             "expression when regex is true; returns path:line: text lines.",
             {"type": "object", "additionalProperties": False, "required": ["pattern"],
              "properties": {"pattern": {"type": "string"}, "regex": {"type": "boolean"}, "side": _SIDE_AGAIN}}),
    ToolSpec("definition", "Where a symbol is defined at the head, with the start of its body.",
             {"type": "object", "additionalProperties": False, "required": ["symbol"],
              "properties": {"symbol": _SYMBOL}}),
    ToolSpec("callers", "Every place at the head that uses a symbol (imports left out), a few lines around each.",
             {"type": "object", "additionalProperties": False, "required": ["symbol"],
              "properties": {"symbol": {"type": "string"}}}),
)
TOOL_NAMES = frozenset(spec.name for spec in SPECS)


def agent_file(path: str) -> bool:
    """An agent's configuration or instruction file: the branch's version is never read."""
    return is_agent_settings(path)


_BACKREFERENCE = re.compile(r"\\[1-9]")


class Refused(ValueError):
    """A call the tools do not answer: the reason is returned to the model and recorded."""


@dataclass
class ReadTools:
    """The tools over one review's frozen tree; every call recorded in `calls`."""

    request: ReviewRequest
    calls: list[dict[str, Any]] = field(default_factory=list)
    bytes_returned: int = 0

    def __post_init__(self) -> None:
        self.base = TreeReader(self.request.repo_root, self.request.target.merge_base)
        self.branch_paths = {change.path for change in self.request.target.files}
        self.uses = UseReader(self.request.head)
        self._lock = threading.Lock()

    def run(self, call: ToolCall) -> str:
        """What the call returns to the model (a refusal says why); recorded either way."""
        # Recorded as asked, each value cut to MAX_ARGUMENT_CHARS: the model writes them, report.json keeps them.
        arguments = {str(name)[:MAX_ARGUMENT_CHARS]: value if isinstance(value, (bool, int, float, type(None)))
                     else str(value)[:MAX_ARGUMENT_CHARS] for name, value in list(call.arguments.items())[:8]}
        record: dict[str, Any] = {"tool": call.name[:MAX_ARGUMENT_CHARS], "arguments": arguments}
        try:
            if call.name not in TOOL_NAMES:
                raise Refused(f"no tool {call.name!r}: the tools are {', '.join(sorted(TOOL_NAMES))}")
            handlers = {"read": self._read, "search": self._search, "definition": self._definition,
                        "callers": self._callers}
            text = handlers[call.name](call.arguments)
            record["outcome"] = "answered"
        except Refused as refusal:
            text = f"refused: {refusal}"
            record.update(outcome="refused", reason=str(refusal))
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + CUT_NOTE
        record["characters"] = len(text)
        record["digest"] = text_digest(text)  # what it returned: a cached answer is reused only while it is the same
        with self._lock:
            self.calls.append(record)
            self.bytes_returned += len(text.encode("utf-8", "surrogateescape"))
        return text

    def _reader(self, arguments: Mapping[str, Any]) -> tuple[TreeReader, str]:
        side = arguments.get("side") or "head"
        if side not in SIDES:
            raise Refused(f"side must be head or base, got {printable(str(side))!r}")
        return (self.request.head, self.request.target.head_sha) if side == "head" else (
            self.base, self.request.target.merge_base)

    def _path(self, arguments: Mapping[str, Any], side: str) -> str:
        raw = arguments.get("path")
        try:
            path = clean_path(raw, set())
        except InvalidPath:
            path = None
        if not isinstance(raw, str) or path is None:
            raise Refused(f"not a repository path: {printable(repr(raw))[:200]}")
        reason = withheld_reason(path, self.branch_paths)
        if reason is not None:
            raise Refused(f"{printable(path)} is withheld from the reviewer: {reason}")
        if side == "head" and agent_file(path):
            raise Refused(f"{printable(path)} is an agent configuration or instruction file: the branch's version "
                          "is not read (side base reads the merge base's)")
        return path

    def _allowed(self, path: str, side: str = "head") -> bool:
        return withheld_reason(path, self.branch_paths) is None and not (side == "head" and agent_file(path))

    def _read(self, arguments: Mapping[str, Any]) -> str:
        reader, revision = self._reader(arguments)
        side = arguments.get("side") or "head"
        raw = arguments.get("path")
        # A directory as the context named it (`src/app/`): the same path without the slash.
        directory_form = raw.rstrip("/") or "." if isinstance(raw, str) and raw.endswith("/") else raw
        path = self._path({**arguments, "path": directory_form}, side)
        data = reader.read_bytes(path) if path != "." else None
        if data is None:
            listing = self._listing(revision, path, side)
            if listing is None:
                raise Refused(f"no file {printable(path)} at the {side}")
            return listing
        if b"\0" in data[:8192]:
            raise Refused(f"{printable(path)} is binary")
        lines = (reader.read_text(path) or "").split("\n")
        start = _positive(arguments.get("start_line"), 1)
        end = min(len(lines), _positive(arguments.get("end_line"), start + MAX_READ_LINES - 1),
                  start + MAX_READ_LINES - 1)
        if start > len(lines):
            raise Refused(f"{printable(path)} has {len(lines)} lines at the {side}")
        heading = f"=== {printable(path)} at the {side}, lines {start}-{end} of {len(lines)} ==="
        return "\n".join([heading, *(f"{number:>6}| {_line(lines[number - 1])}" for number in range(start, end + 1))])

    def _listing(self, revision: str, path: str, side: str) -> str | None:
        """The names in a directory (a subdirectory's with a `/`), withheld and agent files and lock
        files left out as the context leaves them out; None when `path` is no directory there."""
        prefix = "" if path == "." else path + "/"
        completed = run_git(self.request.repo_root, "ls-tree", "-z", revision, "--", prefix or ".",
                            check=False, tree_only=True)
        if completed.returncode != 0:
            return None
        names: list[str] = []
        for record in completed.stdout.split(b"\0"):
            kind, _, name = record.decode("utf-8", "surrogateescape").partition("\t")
            if not name or not name.startswith(prefix) or name == path:
                continue
            if self._allowed(name, side) and PurePosixPath(name).name not in LOCK_FILES:
                names.append(name[len(prefix):] + ("/" if kind.split(" ")[1:2] == ["tree"] else ""))
        if not names:
            return None
        heading = f"=== {printable(prefix or '.')} at the {side}: {len(names)} name(s) ==="
        return "\n".join([heading, *(printable(name) for name in names[:MAX_READ_LINES])])

    def _search(self, arguments: Mapping[str, Any]) -> str:
        _, revision = self._reader(arguments)
        side = arguments.get("side") or "head"
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern or "\n" in pattern or len(pattern) > 200:
            raise Refused("pattern must be one line of 1 to 200 characters")
        if arguments.get("regex") and _BACKREFERENCE.search(pattern):
            # git grep's regex engine backtracks only for back-references, and a search has no
            # deadline of its own: the text the model writes (which the diff may steer) cannot
            # make one run for hours.
            raise Refused("back-references (\\1 … \\9) are not searched: use a fixed string or a regex without them")
        hits = grep_tree(self.request, revision, pattern, MAX_SEARCH_HITS * 2,
                         _AGENT_EXCLUDES if side == "head" else [], word=False, regex=bool(arguments.get("regex")))
        hits = [hit for hit in hits if self._allowed(hit[0], side)][:MAX_SEARCH_HITS]
        if not hits:
            return f"no line at the {side} matches"
        return "\n".join(f"{printable(path)}:{line}: {_line(text)}" for path, line, text in hits)

    def _symbol(self, arguments: Mapping[str, Any]) -> str:
        symbol = arguments.get("symbol")
        if not isinstance(symbol, str) or not symbol.isidentifier():
            raise Refused(f"symbol must be a name, got {printable(repr(symbol))[:200]}")
        return symbol

    def _sites(self, symbol: str) -> list[Site]:
        return [site for site in self.uses.sites(self.request, symbol) if self._allowed(site.path)]

    def _excerpt(self, site: Site, window: Callable[[int], tuple[int, int]], why: str) -> str:
        """The site's lines `window` picks given the file's number of lines, numbered."""
        lines = (self.request.head.read_text(site.path) or "").split("\n")
        first, last = window(len(lines))
        heading = f"=== {printable(site.path)} lines {first}-{last} ({why}) ==="
        return "\n".join([heading, *(f"{number:>6}| {_line(lines[number - 1])}" for number in range(first, last + 1))])

    def _definition(self, arguments: Mapping[str, Any]) -> str:
        symbol = self._symbol(arguments)
        found = [site for site in self._sites(symbol) if site.defines(symbol)][:MAX_DEFINITIONS]
        if not found:
            return f"no definition of {symbol} at the head (a library's or a builtin's name?)"
        return "\n\n".join(
            self._excerpt(site, partial(self.uses.definition_window, site, DEFINITION_LINES + 1),
                          f"definition of {symbol}")
            for site in found)

    def _callers(self, arguments: Mapping[str, Any]) -> str:
        symbol = self._symbol(arguments)
        found = [site for site in self._sites(symbol) if not site.defines(symbol) and not site.is_document]
        if not found:
            return f"no use of {symbol} at the head outside its definitions and imports"
        parts: list[str] = []
        size = 0
        for site in found[:MAX_CALLERS]:
            excerpt = self._excerpt(site, partial(self.uses.window, site, SITE_LINES, SITE_LINES), f"a use of {symbol}")
            if size + len(excerpt) > CALLER_EXCERPT_CHARS:
                break
            parts.append(excerpt)
            size += len(excerpt) + 2
        rest = found[len(parts):]
        if rest:  # named by file and line, so every one can still be read
            by_file: dict[str, list[str]] = {}
            for site in rest:
                by_file.setdefault(printable(site.path), []).append(str(site.line))
            parts.append(MORE_USES.format(count=len(rest), symbol=symbol)
                         + "\n".join(f"  {path}: {', '.join(lines)}" for path, lines in by_file.items()))
        return "\n\n".join(parts)


def _positive(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else default


def _line(text: str) -> str:
    clipped = text if len(text) <= MAX_LINE_CHARACTERS else text[:MAX_LINE_CHARACTERS] + " …"
    return redact_line(printable(clipped))[0]


def asks_for_more(result: str) -> bool:
    """Whether a tool's answer ends pointing the model at another call: cut short, or a `callers`
    answer naming uses it did not show (its last part; a read's lines are numbered, never that)."""
    return result.endswith(CUT_NOTE) or result.rpartition("\n\n")[2].startswith(_MORE_USES_LEAD)


def transcript_text(calls: list[dict[str, Any]]) -> str:
    """The calls, as recorded, in one canonical text (for a digest)."""
    return json.dumps(calls, sort_keys=True, default=str)


def replayed(request: ReviewRequest, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded calls made again on this review's tree: equal digests mean equal answers."""
    tools = ReadTools(request)
    for index, call in enumerate(calls):
        arguments = call.get("arguments")
        tools.run(ToolCall(str(index), str(call.get("tool")), arguments if isinstance(arguments, dict) else {}))
    return tools.calls
