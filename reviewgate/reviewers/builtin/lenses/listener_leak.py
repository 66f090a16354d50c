"""An event listener added per request and never removed (JavaScript, TypeScript): inside a
request handler (a function whose parameters are `(req, res...)`, or the callback of
`http.createServer`), `emitter.on(...)`/`addListener`/`addEventListener` on an object that
outlives the request: not `req`/`res`, not a parameter or a local of the handler, not the result
of a call made there (`fs.createReadStream(p).on(...)` dies with its stream).

Each request adds one more listener to a long-lived emitter: memory grows with traffic, every
event runs every old closure (holding its request and response), and Node warns of a possible
leak past 10. Safe in the same handler: `.once(...)`, `{ once: true }`, a `signal` option, or a
`removeListener`/`off`/`removeEventListener` call.

The same leak through an `AbortSignal` the caller passed in (any function, not only a handler):
`options.signal.addEventListener('abort', …)` on every call. A caller that keeps one controller
for many requests, or a signal that never aborts, collects one listener per call. Safe: the
function's own controller (`new AbortController()`), `{ once: true }` or a `signal` option,
`removeEventListener` in the same function, or `AbortSignal.any([...])` instead of a listener.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched
from reviewgate.reviewers.builtin.file_kinds import is_test_file
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
        "true }`, or remove it in the same handler. The same holds for an `abort` listener on the caller's "
        "`AbortSignal`, added on every call: combine the signals with `AbortSignal.any`, or remove it when the "
        "work ends."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "JS/TS: inside a request handler (parameters `(req, res …)`, or an `http.createServer` "
        "callback), `emitter.on(…)`/`addListener`/`addEventListener` on an object that outlives the "
        "request (`process`, a module-level emitter); outside test files, in any function, "
        "`signal.addEventListener('abort', …)` on a signal the caller passed in (a parameter, "
        "`options.signal`, `this._options.signal`, or a name assigned one)"
    ),
    not_on=(
        "`req`/`res`/a parameter or local of the handler/an object a call there returns "
        "(`fs.createReadStream(p).on(…)`); `.once(…)`, `{ once: true }`, a `signal` option, or "
        "`removeListener`/`off`/`removeEventListener` in the same handler; for `abort` listeners, the "
        "signal of a controller the file makes (`new AbortController()`), `{ once: true }` or a `signal` "
        "option, `removeEventListener` or `AbortSignal.any` in the same function, a listener at module level"
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
        Example(
            file=File("source/client.ts", "typescript", """\
export async function request(url: string, options: {signal?: AbortSignal}) {
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(options.signal?.reason));
  return fetch(url, {signal: controller.signal});
}
"""),
            caption="An abort listener on the caller's signal, one per call, never removed.",
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
        Example(
            file=File("source/client.ts", "typescript", """\
export async function request(url: string, options: {signal?: AbortSignal}) {
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  return fetch(url, {signal});
}
"""),
            caption="The caller's signal combined with the call's own: nothing is left on it.",
        ),
    ),
    by_record=True,
    record=Record(
        findings=0,
        holding=0,
        where=(
            "no finding in the whole trees of the tuning half's 16 projects and of 25 PyPI and npm packages (2026-12-06); "
            "widened to `abort` listeners on the caller's signal, none again in the tuning half's 16 and 24 packages "
            "(got `core/index.js:156` removes its listener, mongoose `eachAsync.js:42` passes `{ once: true }`, eslint "
            "`eslint.js:521` listens on its own controller's signal). Written for a later fix on the tuning half: ky "
            "e48386e701 (one listener per request on a shared signal, ky #330)"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
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
        "abort": re.compile(
            r"(?<![\w$.])(?P<target>[A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$][\w$]*)*)\s*\??\.\s*addEventListener\s*\(\s*['\"`]abort['\"`]"
        ),
        # A controller the file makes: its signal is its own, and lives as long as the work.
        "own_controller": re.compile(r"(?P<name>[\w$]+)\s*(?::\s*[\w.<>| ]+)?=\s*new\s+(?:globalThis\s*\.\s*)?AbortController\b"),
        "released": re.compile(r"\.\s*removeEventListener\s*\(|AbortSignal\s*\.\s*any\s*\("),
        "once": re.compile(r"\bonce\s*:\s*true\b|\bsignal\s*[:,}]"),
    }


class ListenerLeakLens:
    rule = RULE_LISTENER_LEAK

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, _language, text in changed_sources(request, _LANGUAGES, _NEEDLES):
            yield from _file(text, change.path, change.added_lines())
            if "abort" in text and not is_test_file(change.path):
                yield from _abort_listeners(text, change.path, change.added_lines())


def _abort_listeners(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    """An `abort` listener on a signal the caller passed in (a parameter, `options.signal`, or a
    name assigned one), in a function that neither removes it nor adds it `{ once: true }`: the
    caller's signal may serve many calls and never abort, so each call leaves one more listener
    (and everything its closure holds) on it."""
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.text_flow import functions

    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    listens = [match for match in patterns["abort"].finditer(text)
               if masked[match.start()] == text[match.start()] and source.line_of(match.start()) in added]
    if not listens:
        return
    bodies = functions(source, go=False)
    own = {match.group("name") for match in patterns["own_controller"].finditer(masked)}
    for match in listens:
        inside = [function for function in bodies if function.holds(match.start())]
        if not inside:
            continue  # at module level: one listener for the process, not one per call
        function = max(inside, key=lambda item: item.body_open)
        outer = min(inside, key=lambda item: item.body_open)
        target = re.sub(r"\s+", "", match.group("target"))
        if not _callers_signal(masked, target, own, outer.header_start, match.start(), function):
            continue
        opener = match.start() + match.group(0).index("(", len(match.group("target")))
        closer = source.pairs.get(opener, match.end())
        if patterns["released"].search(masked, function.body_open, function.body_close) or patterns["once"].search(
            masked, opener, closer
        ):
            continue
        line = source.line_of(match.start())
        code = code_line(text, line)
        yield bug_finding(
            rule=RULE_LISTENER_LEAK,
            category="correctness",
            title=f"Listener added to the caller's `{target}` on every call, never removed",
            body=(
                f"{matched(code)}: `{target}` is the caller's signal, and this function adds an `abort` listener to "
                "it on every call without removing it. A signal the caller keeps (one controller for many requests, "
                "a signal that never aborts) collects one listener per call, each holding what its closure holds, "
                "until the process runs out of memory. Remove it when the work ends (`removeEventListener` in a "
                "`finally`), pass `{ once: true, signal: ownController.signal }`, or combine the signals with "
                "`AbortSignal.any([signal, own.signal])`."
            ),
            path=path,
            line=line,
            code=code,
        )


def _callers_signal(masked: str, target: str, own: set[str], scope_start: int, at: int, function: Function) -> bool:
    """Whether `target` is a signal the caller passed in: a parameter of the enclosing functions, a
    member `.signal` of something other than a controller made in the file (`options.signal`,
    `this._options.signal`), or a name assigned one of those before the listener."""
    patterns = _patterns()
    if target.endswith(".signal"):
        base = target[: -len(".signal")]
        return base.rsplit(".", 1)[-1] not in own
    if "." in target:
        return False
    parameters = patterns["words"].findall(masked[function.header_start : function.body_open])
    assigned = list(re.finditer(
        rf"(?<![\w$.]){re.escape(target)}\s*(?::\s*[\w.<>| ]+)?=(?!=)\s*(?P<value>[^;\n]+)", masked[scope_start:at]
    ))
    if assigned:
        value = assigned[-1].group("value")
        if re.search(r"\bAbortController\b|AbortSignal\s*\.\s*(?:any|timeout)", value):
            return False
        signal = re.search(r"(?P<base>[\w$.]+?)\s*\??\.\s*signal\b", value)
        return signal is not None and signal.group("base").rsplit(".", 1)[-1] not in own
    return target in parameters


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
