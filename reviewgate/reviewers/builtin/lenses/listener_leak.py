"""An event listener added per request and never removed (JavaScript, TypeScript): inside a
request handler (a function whose parameters are `(req, res...)`, or the callback of
`http.createServer`), `emitter.on(...)`/`addListener`/`addEventListener` on an object that
outlives the request: not `req`/`res`, not a parameter or a local of the handler, not the result
of a call made there (`fs.createReadStream(p).on(...)` dies with its stream).

Each request adds one more listener to a long-lived emitter: memory grows with traffic, every
event runs every old closure (holding its request and response), and Node warns of a possible
leak past 10. Safe in the same handler: `.once(...)`, `{ once: true }`, a `signal` option, or a
`removeListener`/`off`/`removeEventListener` call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

LISTENER_LEAK = Rule(
    id="correctness/listener-leak",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Event listener added per request and never removed",
    full=(
        "A request handler adds a listener to a long-lived object and never removes it: every request "
        "adds another, until the process runs out of memory or warns of a leak. Use `once`, `{ once: "
        "true }`, or remove it in the same handler."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "JS/TS: inside a request handler (parameters `(req, res …)`, or an `http.createServer` "
        "callback), `emitter.on(…)`/`addListener`/`addEventListener` on an object that outlives the "
        "request (`process`, a module-level emitter)"
    ),
    not_on=(
        "`req`/`res`/a parameter or local of the handler/an object a call there returns "
        "(`fs.createReadStream(p).on(…)`); `.once(…)`, `{ once: true }`, a `signal` option, or "
        "`removeListener`/`off`/`removeEventListener` in the same handler"
    ),
    fires=(
        Example(
            file=File("src/events.js", "javascript", """\
const { EventEmitter } = require('events');

const bus = new EventEmitter();

app.get('/events', (req, res) => {
  bus.on('message', (message) => res.write(`data: ${JSON.stringify(message)}\\n\\n`));
});
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("src/events.js", "javascript", """\
const { EventEmitter } = require('events');

const bus = new EventEmitter();

app.get('/events', (req, res) => {
  const send = (message) => res.write(`data: ${JSON.stringify(message)}\\n\\n`);
  bus.on('message', send);
  req.on('close', () => bus.off('message', send));
});
"""),
        ),
    ),
    by_record=True,
    record=Record(
        findings=0,
        holding=0,
        where="no finding in the whole trees of the tuning half's 16 projects and of 25 PyPI and npm packages (2026-12-06)",
    ),
)

RULES = (LISTENER_LEAK,)
RULE_LISTENER_LEAK = LISTENER_LEAK.id


if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.text_flow import Function

_LANGUAGES = frozenset({Language.JAVASCRIPT, Language.TYPESCRIPT})
_NEEDLES = (".on(", "addListener(", "addEventListener(")
_PER_REQUEST = frozenset({"req", "request", "res", "response", "reply", "this", "ctx", "socket", "stream"})


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "handler": re.compile(
            r"\(?\s*(?:req|request)\b(?:\s*:\s*[^,()]{1,80})?\s*,\s*(?:res|response|reply)\b"
        ),
        "server": re.compile(r"\bcreateServer\s*\("),
        "listen": re.compile(
            r"(?<![\w$.])(?P<target>[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*\.\s*"
            r"(?P<method>on|addListener|prependListener|addEventListener)\s*\(\s*['\"`]"
        ),
        "removal": re.compile(
            r"\.\s*(?:off|removeListener|removeEventListener|removeAllListeners)\s*\(|\bonce\s*:\s*true\b"
            r"|\bsignal\s*[:,}]"
        ),
        "local": re.compile(r"(?<![\w$.])(?:const|let|var)\s+(?:\{[^}]*\}|\[[^\]]*\]|(?P<name>[\w$]+))"),
        "words": re.compile(r"[A-Za-z_$][\w$]*"),
    }


class ListenerLeakLens:
    rule = RULE_LISTENER_LEAK

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, _language, text in changed_sources(request, _LANGUAGES, _NEEDLES):
            yield from _file(text, change.path, change.added_lines())


def _file(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.text_flow import functions

    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    listens = [match for match in patterns["listen"].finditer(masked) if source.line_of(match.start()) in added]
    if not listens:
        return
    bodies = functions(source, go=False)
    server_callbacks = set()
    for match in patterns["server"].finditer(masked):
        for start, _end in call_arguments(source, match.end() - 1):
            server_callbacks.add(source.skip_space(start))
    handlers = [
        function for function in bodies
        if patterns["handler"].match(masked, function.header_start)
        or function.header_start in server_callbacks
        or any(start <= function.header_start <= start + 6 for start in server_callbacks)  # `async (req, res)`
    ]
    for match in listens:
        handler = next((item for item in handlers if item.holds(match.start())), None)
        if handler is None:
            continue
        target = re.sub(r"\s+", "", match.group("target"))
        root = target.split(".", 1)[0]
        if root in _PER_REQUEST or root in _locals(masked, bodies, handler.header_start, handler.body_close):
            continue
        if patterns["removal"].search(masked, handler.body_open, handler.body_close):
            continue
        line = source.line_of(match.start())
        code = code_line(text, line)
        yield bug_finding(
            rule=RULE_LISTENER_LEAK,
            category="correctness",
            title=f"Listener added to `{target}` on every request, never removed",
            body=(
                f"{matched(code)}: the handler that starts at line {source.line_of(handler.header_start)} "
                f"adds a listener (`.{match.group('method')}`) to `{target}`, which outlives the request, and "
                "nothing in the handler removes it. Each request adds one more: memory grows with traffic, "
                "every event runs every old listener (each holding its request and response), and Node "
                "warns past 10. Use `.once(...)` or `{ once: true }`, or remove it when the response "
                "finishes (`res.on('close', () => target.off(event, listener))`)."
            ),
            path=path,
            line=line,
            code=code,
        )


def _locals(masked: str, bodies: Sequence[Function], start: int, end: int) -> set[str]:
    """Names the handler declares: its parameters and those of functions inside it, and its
    `const`/`let`/`var` declarations (destructured names too)."""
    patterns = _patterns()
    names: set[str] = set()
    for match in patterns["local"].finditer(masked, start, end):
        names.update(patterns["words"].findall(match.group(0)))
    for function in bodies:
        if start <= function.header_start < end:
            names.update(patterns["words"].findall(masked[function.header_start : function.body_open]))
    return names - {"const", "let", "var", "async", "function"}

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (ListenerLeakLens(),)
