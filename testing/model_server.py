"""A real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions and Anthropic Messages
wire formats, answering from a script: the stand-in for a model API in the tests.

Each POST takes the next scripted Reply (the last one repeats); a second-look request takes the
next of `verdicts` instead when that script is given (the two run in parallel, so their order
is not known). Every request is recorded with its arrival time, path, headers and JSON body, so
tests can check what was sent. The answer's `completion_tokens` honours the request's token cap.

`mimic="llama-cpp-python"` behaves as that server's OpenAI-compatible API does (0.3.x): HTTP 500
naming `response_format` for `json_schema` (its request model takes `text` and `json_object`),
`json_object` with a `schema` enforced (the scripted review), bare `json_object` answered with
whatever object its grammar lets a small model write (`{"": ""}`), and `max_completion_tokens`
ignored: without `max_tokens` it generates on, `unbounded_seconds` long, 4,096 tokens.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `review` is a contract document (wrapped in the wire format: message
    content for OpenAI, a `record_review` tool call for Anthropic); `text` is raw model text
    instead; `body` replaces the whole JSON body (error payloads)."""

    status: int = 200
    review: dict[str, Any] | None = None
    text: str | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stop_reason: str = "tool_use"
    drip_seconds: float = 0.0  # send the body one byte at a time, this long apart
    oversized_bytes: int = 0  # instead of the wire format, a body of this many bytes, streamed
    finish_reason: str = "stop"  # OpenAI's; "length" says the answer was cut at the token cap
    usage: dict[str, Any] | None = None  # replaces the wire format's usage object
    # Calls of the read-only tools (name, arguments) instead of an answer: OpenAI's `tool_calls`,
    # Anthropic's `tool_use` blocks.
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass(frozen=True)
class Recorded:
    at: float
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def text(self) -> str:
        """Everything the request said to the model, as one string (for content checks)."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def is_verification(self) -> bool:
        """A second-look request: its schema (in the format, the tool or the prompt) asks for a
        failure scenario, which the review contract never does."""
        return self.method == "POST" and "failure_scenario" in self.text


def _cap(request: Any) -> int:
    """The token cap the request set, in either field (a server honouring it stops there)."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = request.get(key) if isinstance(request, dict) else None
        if isinstance(value, int):
            return value
    return 1_000_000


def review_document(
    findings: list[dict[str, Any]] | None = None,
    verdict: str = "approve",
    summary: str = "Reviewed.",
    product_questions: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "verdict": verdict,
        "summary": summary,
        "findings": findings or [],
        "product_questions": product_questions or [],
    }


def finding(
    path: str | None,
    line: int | None,
    *,
    finding_class: str = "correctness",
    severity: str = "major",
    category: str = "correctness",
    title: str = "A problem",
    body: str = "Why it is wrong.",
    evidence: str = "the code",
    end_line: int | None = None,
    confidence: float | None = None,
    suggestion: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "confidence": confidence,
        "suggestion": suggestion,
        "class": finding_class,
        "category": category,
        "severity": severity,
        "path": path,
        "line": line,
        "end_line": end_line,
        "title": title,
        "body": body,
        "evidence": evidence,
    }


def verdict(verdict: str, reason: str = "Checked against the code.", scenario: str | None = None,
            severity: str | None = None) -> dict[str, Any]:
    """A second-look answer: `holds` (or its earlier word, `confirmed`) needs the failure
    scenario, `holds_at_lower_severity` the severity, `refuted` a reason."""
    if verdict in ("holds", "confirmed") and scenario is None:
        scenario = "called with b = 0, divide raises ZeroDivisionError"
    return {"verdict": verdict, "severity": severity, "reason": reason, "failure_scenario": scenario}


LLAMA_CPP_PYTHON = "llama-cpp-python"
# Its request model's validation error, as its error handler returns it (HTTP 500).
LLAMA_CPP_PYTHON_FORM_ERROR = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or "
    "'json_object' [type=literal_error, input_value='json_schema', input_type=str]"
)


class ModelServer:
    def __init__(
        self,
        script: list[Reply],
        models: tuple[str, ...] = ("test-model",),
        verdicts: list[Reply] | None = None,
        mimic: str | None = None,
        unbounded_seconds: float = 30.0,
        responder: Callable[[Any], Reply | None] | None = None,
    ) -> None:
        assert mimic in (None, LLAMA_CPP_PYTHON), mimic
        self.mimic, self.unbounded_seconds = mimic, unbounded_seconds
        # Answers computed from the request (a stand-in that reads what it was sent); None: the script's.
        self.responder = responder
        self.script = list(script)
        self.verdicts = list(verdicts) if verdicts is not None else None
        self.models = models
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def posts(self) -> list[Recorded]:
        return [item for item in self.requests if item.method == "POST"]

    def review_posts(self) -> list[Recorded]:
        return [item for item in self.posts() if not item.is_verification]

    def verification_posts(self) -> list[Recorded]:
        return [item for item in self.posts() if item.is_verification]

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, verification: bool) -> Reply:
        with self._lock:
            script = self.verdicts if verification and self.verdicts is not None else self.script
            if not script:  # nothing scripted (a doctor probe): an approving review
                return Reply()
            return script.pop(0) if len(script) > 1 else script[0]

    def _as_mimicked(self, reply: Reply, request: Any) -> Reply:
        """The scripted reply as the mimicked server would turn it (see the module's docstring)."""
        if self.mimic != LLAMA_CPP_PYTHON or reply.status >= 400 or reply.body is not None:
            return reply
        form = request.get("response_format") if isinstance(request, dict) else None
        kind = form.get("type") if isinstance(form, dict) else None
        if kind == "json_schema":
            error = {"message": LLAMA_CPP_PYTHON_FORM_ERROR, "type": "internal_server_error", "param": None, "code": None}
            return Reply(status=500, body={"error": error})
        if kind == "json_object" and isinstance(form, dict) and "schema" not in form:
            reply = Reply(text='{"": ""}', delay=reply.delay)
        if "max_tokens" not in request:  # it reads no max_completion_tokens: generation runs on
            return replace(reply, delay=self.unbounded_seconds,
                           usage={"prompt_tokens": 1000, "completion_tokens": 4096, "total_tokens": 5096})
        return reply

    def _wire(self, path: str, reply: Reply, request: Any) -> Any:
        if reply.body is not None:
            return reply.body
        if reply.status >= 400:
            return {"error": {"type": "scripted_error", "message": f"scripted HTTP {reply.status}"}}
        content = reply.text if reply.text is not None else json.dumps(reply.review or review_document())
        if path.endswith("/messages"):
            blocks: list[dict[str, Any]]
            if reply.tool_calls:
                blocks = [{"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": arguments}
                          for index, (name, arguments) in enumerate(reply.tool_calls)]
            elif reply.text is None:
                blocks = [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "record_review",
                        "input": reply.review or review_document(),
                    }
                ]
            else:
                blocks = [{"type": "text", "text": reply.text}]
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": request.get("model"),
                "content": blocks,
                "stop_reason": reply.stop_reason,
                "usage": reply.usage or {"input_tokens": 1000, "output_tokens": min(100, _cap(request))},
            }
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if reply.tool_calls:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{index}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for index, (name, arguments) in enumerate(reply.tool_calls)]}
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": request.get("model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if reply.tool_calls else reply.finish_reason,
                    "message": message,
                }
            ],
            "usage": reply.usage or {"prompt_tokens": 1000, "completion_tokens": min(100, _cap(request)),
                                     "total_tokens": 1000 + min(100, _cap(request))},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None,
                      reply: Reply | None = None) -> None:
                data = json.dumps(body).encode("utf-8")
                oversized = reply.oversized_bytes if reply else 0
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    if not oversized:  # an oversized body runs to the connection's end: no length to go by
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if oversized:
                        block = b"x" * 65536
                        for start in range(0, oversized, len(block)):
                            self.wfile.write(block[: oversized - start])
                    elif reply is not None and reply.drip_seconds:
                        for index in range(len(data)):
                            self.wfile.write(data[index:index + 1])
                            self.wfile.flush()
                            time.sleep(reply.drip_seconds)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

            def _record(self, body: Any) -> Recorded:
                recorded = Recorded(time.monotonic(), self.command, self.path, dict(self.headers), body)
                with server._lock:
                    server.requests.append(recorded)
                return recorded

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": model, "object": "model"} for model in server.models],
                        },
                    )
                    return
                model = self.path.rsplit("/", 1)[-1]
                if model in server.models:
                    self._send(200, {"id": model, "type": "model"})
                else:
                    self._send(404, {"error": {"type": "not_found_error", "message": f"model: {model}"}})

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                recorded = self._record(body)
                computed = server.responder(body) if server.responder is not None else None
                reply = computed or server._as_mimicked(server._next(recorded.is_verification), body or {})
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply.status, server._wire(self.path, reply, body or {}), reply.headers, reply)

        return Handler
