"""A real HTTP server on 127.0.0.1 standing in for the GitHub and GitLab REST APIs.

It keeps the little state reviewgate touches (check runs, PR comments, labels, MR notes,
project members), checks every check-run body against the conformance schemas and the limits
GitHub states only in prose, answers 403 to writes with a read-only (fork) token, can answer
429 with `Retry-After` or 502 once, paginates lists with `Link` headers, and records every
request so tests can count what was posted.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import jsonschema  # type: ignore[import-untyped]

from testing.cli import CliResult, run_cli
from testing.conformance import CONFORMANCE_DIR

GITHUB_BOT = {"login": "github-actions[bot]", "type": "Bot"}
WRITTEN_AT = "2026-01-01T00:00:00Z"  # when every stand-in comment was written
EDITED_AT = "2026-01-01T00:05:00Z"  # when an edited one was changed
PR_AUTHOR = "pr-author"  # the pull request's author, who also wrote its one commit
MR_AUTHOR = {"id": 4, "username": "mr-author"}
MR_AUTHOR_EMAIL = "mr-author@example.com"
GITLAB_BOT_ID = 99
GITLAB_BOT_NAME = "reviewgate-bot"
MAX_TITLE_CHARS = 255  # GitHub: annotation title
MAX_TEXT_BYTES = 64 * 1024  # GitHub: annotation message and raw_details


def conformance_dir() -> Path | None:
    return CONFORMANCE_DIR if CONFORMANCE_DIR.is_dir() else None


def load_schema(name: str) -> dict[str, Any]:
    return json.loads((CONFORMANCE_DIR / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    token: str
    at: float = 0.0  # time.monotonic() on arrival, for tests that check the waits between calls


@dataclass
class ForgeState:
    page_size: int = 2
    read_only_tokens: set[str] = field(default_factory=set)
    # (method, path regex) answered once with 429 + Retry-After, or once with 502.
    throttle_once: list[tuple[str, str]] = field(default_factory=list)
    fail_once: list[tuple[str, str]] = field(default_factory=list)
    retry_after: str = "1"
    stall_seconds: float = 0.0  # every request waits this long before any answer (a hung API)
    # (method, path regex, status, headers, body): answered once each, in order, before routing.
    scripted: list[tuple[str, str, int, dict[str, str], Any]] = field(default_factory=list)
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)  # GitHub issue comments
    review_comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    notes: dict[int, dict[str, Any]] = field(default_factory=dict)  # GitLab MR notes
    reviews: list[dict[str, Any]] = field(default_factory=list)  # GitHub pull request reviews posted
    minimized: set[str] = field(default_factory=set)  # GitHub node ids hidden through GraphQL
    # GitLab discussions on the diff: id -> {"id", "notes": [...]}, and the MR's diff_refs.
    discussions: dict[str, dict[str, Any]] = field(default_factory=dict)
    diff_refs: dict[str, str] = field(default_factory=lambda: {
        "base_sha": "b" * 40, "start_sha": "b" * 40, "head_sha": "c" * 40})
    members: dict[int, int] = field(default_factory=dict)  # GitLab user id -> access level
    # Who wrote the change: the PR's author and its commits (as GET pulls/N/commits lists them),
    # the MR's author and its commits (GET merge_requests/N/commits), GitLab users' profiles.
    pull_author: str = PR_AUTHOR
    pull_commits: list[dict[str, Any]] = field(default_factory=lambda: [github_commit(PR_AUTHOR)])
    mr_author: dict[str, Any] = field(default_factory=lambda: dict(MR_AUTHOR))
    mr_commits: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": "c" * 40, "author_email": MR_AUTHOR_EMAIL, "committer_email": MR_AUTHOR_EMAIL}])
    users: dict[int, dict[str, Any]] = field(default_factory=dict)  # GitLab GET /users/:id
    # GitHub GraphQL: node id -> the logins that edited that comment, oldest first.
    comment_edits: dict[str, list[str]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    schema_errors: list[str] = field(default_factory=list)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1000))

    def add_comment(self, body: str, login: str, association: str, review: bool = False) -> int:
        comment_id = next(self.ids)
        store = self.review_comments if review else self.comments
        store[comment_id] = {"id": comment_id, "node_id": f"IC_{comment_id}", "body": body,
                             "user": {"login": login, "type": "User"}, "author_association": association,
                             "created_at": WRITTEN_AT, "updated_at": WRITTEN_AT}
        return comment_id

    def edit_comment(self, comment_id: int, body: str, editor: str) -> None:
        """`editor` changes a PR comment's text: REST shows only a later `updated_at`; GraphQL
        names the editor."""
        comment = self.comments.get(comment_id) or self.review_comments[comment_id]
        comment.update(body=body, updated_at=EDITED_AT)
        self.comment_edits.setdefault(comment["node_id"], []).append(editor)

    def add_review_comment(self, body: str, login: str, path: str, line: int | None,
                           in_reply_to: int | None = None, bot: bool = False) -> int:
        """A line comment as GitHub lists it: `line` None when the diff no longer shows its line."""
        comment_id = next(self.ids)
        self.review_comments[comment_id] = {
            "id": comment_id, "node_id": f"PRRC_{comment_id}", "body": body, "path": path, "line": line,
            "user": dict(GITHUB_BOT) if bot else {"login": login, "type": "User"},
            "author_association": "NONE" if bot else "CONTRIBUTOR", "created_at": WRITTEN_AT, "updated_at": WRITTEN_AT,
            **({"in_reply_to_id": in_reply_to} if in_reply_to else {})}
        return comment_id

    def add_discussion_reply(self, discussion_id: str, body: str, username: str) -> None:
        notes = self.discussions[discussion_id]["notes"]
        notes.append({"id": next(self.ids), "body": body, "system": False, "resolved": notes[0]["resolved"],
                      "author": {"id": 5, "username": username}})

    def add_note(self, body: str, user_id: int, username: str, system: bool = False,
                 updated_at: str = WRITTEN_AT) -> int:
        """An MR note; a later `updated_at` than its `created_at` is a note edited since."""
        note_id = next(self.ids)
        self.notes[note_id] = {"id": note_id, "body": body, "system": system,
                               "author": {"id": user_id, "username": username, "name": username,
                                          "state": "active"},
                               "created_at": WRITTEN_AT, "updated_at": updated_at}
        return note_id

    def posts(self, method: str, pattern: str) -> list[Recorded]:
        return [item for item in self.requests if item.method == method and re.search(pattern, item.path)]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        state = self.server.state
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ") or self.headers.get(
            "PRIVATE-TOKEN") or ""
        with self.server.lock:
            state.requests.append(Recorded(method, parts.path, parse_qs(parts.query), body, token,
                                           time.monotonic()))
        if state.stall_seconds:  # recorded first, so a test can see the call arrive and hang
            time.sleep(state.stall_seconds)
        with self.server.lock:
            for rules, status in ((state.throttle_once, 429), (state.fail_once, 502)):
                for rule in list(rules):
                    if rule[0] == method and re.search(rule[1], parts.path):
                        rules.remove(rule)
                        headers = {"Retry-After": state.retry_after} if status == 429 else {}
                        return self._send(status, {"message": "try again"}, headers)
            for script in list(state.scripted):
                if script[0] == method and re.search(script[1], parts.path):
                    state.scripted.remove(script)
                    return self._send(script[2], script[4], script[3])
            if not token:
                return self._send(401, {"message": "Requires authentication"})
            if method != "GET" and token in state.read_only_tokens:
                return self._send(403, {"message": "Resource not accessible by integration"})
            try:
                status, data, headers = route(state, method, parts.path, parse_qs(parts.query), body,
                                              self._base())
            except (KeyError, ValueError, StopIteration):
                status, data, headers = 404, {"message": "Not Found"}, {}
        self._send(status, data, headers)

    def _base(self) -> str:
        return _address(self.server)

    def _send(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = data if isinstance(data, bytes) else json.dumps(data).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (a stalled-server test)


def _address(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: ForgeState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.lock = threading.Lock()


def _validate(state: ForgeState, schema_name: str, body: Any) -> None:
    if conformance_dir() is None:
        return
    for error in jsonschema.Draft7Validator(load_schema(schema_name)).iter_errors(body):
        state.schema_errors.append(f"{schema_name}: {error.message}")
    output = body.get("output") if isinstance(body, dict) else None
    for annotation in (output or {}).get("annotations", []):
        if len(annotation.get("title", "")) > MAX_TITLE_CHARS:
            state.schema_errors.append("annotation title over 255 characters")
        for key in ("message", "raw_details"):
            if len(annotation.get(key, "").encode()) > MAX_TEXT_BYTES:
                state.schema_errors.append(f"annotation {key} over 64 KB")


def _page(state: ForgeState, items: list[Any], query: dict[str, list[str]], base: str,
          path: str) -> tuple[int, Any, dict[str, str]]:
    """A page of `state.page_size` items (the client's per_page is ignored, as GitHub caps it),
    with a `Link: rel="next"` header while more remain."""
    page = int(query.get("page", ["1"])[0])
    start = (page - 1) * state.page_size
    headers = {}
    if start + state.page_size < len(items):
        kept = {key: values[0] for key, values in query.items() if key != "page"}
        extra = "".join(f"&{key}={value}" for key, value in kept.items())
        headers["Link"] = f'<{base}{path}?page={page + 1}{extra}>; rel="next"'
    return 200, items[start:start + state.page_size], headers


def _public(run: dict[str, Any]) -> dict[str, Any]:
    """A check run as the API shows it: annotations are listed by another endpoint."""
    return {key: value for key, value in run.items() if key != "annotations"}


def route(state: ForgeState, method: str, path: str, query: dict[str, list[str]], body: Any,
          base: str) -> tuple[int, Any, dict[str, str]]:
    if method == "GET" and (repository := re.fullmatch(r"/repos/([^/]+/[^/]+)", path)):
        return 200, {"full_name": repository.group(1)}, {}
    github = re.fullmatch(r"/repos/[^/]+/[^/]+/(.+)", path)
    if github:
        return _github(state, method, github.group(1), query, body, base, path)
    if method == "POST" and path == "/graphql" and "userContentEdits" in body["query"]:
        return 200, {"data": {"nodes": [_edit_history(state, node) for node in body["variables"]["ids"]]}}, {}
    if method == "POST" and path == "/graphql":
        node = body["variables"]["id"]
        if "minimizeComment" not in body["query"] or not any(
                item.get("node_id") == node for item in state.review_comments.values()):
            return 200, {"errors": [{"message": f"Could not resolve to a node with the global id of '{node}'"}]}, {}
        state.minimized.add(node)
        return 200, {"data": {"minimizeComment": {"minimizedComment": {"isMinimized": True}}}}, {}
    gitlab = re.fullmatch(r"/api/v4/(.+)", path)
    if gitlab:
        return _gitlab(state, method, gitlab.group(1), query, body, base, path)
    raise KeyError(path)


def github_commit(author: str, committer: str = "web-flow", email: str = "") -> dict[str, Any]:
    """A commit as GET pulls/N/commits lists it: GitHub's accounts for its author and committer
    (None for an email linked to none), and the git identities."""
    def account(login: str) -> dict[str, Any] | None:
        return {"login": login, "type": "User"} if login else None

    person = {"name": author or "someone", "email": email or f"{author or 'someone'}@example.com"}
    return {"sha": "c" * 40, "author": account(author), "committer": account(committer),
            "commit": {"author": person, "committer": person}}


def _edit_history(state: ForgeState, node: str) -> dict[str, Any] | None:
    """A comment as GraphQL's `... on Comment` shows its edits; null for an unknown id."""
    comment = next((item for store in (state.comments, state.review_comments) for item in store.values()
                    if item.get("node_id") == node), None)
    if comment is None:
        return None
    editors = state.comment_edits.get(node, [])
    return {"id": node, "lastEditedAt": EDITED_AT if editors else None,
            "editor": {"login": editors[-1]} if editors else None,
            "userContentEdits": {"totalCount": len(editors),
                                 "nodes": [{"editor": {"login": login}} for login in reversed(editors)]}}


def _github(state: ForgeState, method: str, rest: str, query: dict[str, list[str]], body: Any, base: str,
            path: str) -> tuple[int, Any, dict[str, str]]:
    if method == "GET" and (match := re.fullmatch(r"commits/([0-9a-f]+)/check-runs", rest)):
        name = query.get("check_name", [None])[0]
        runs = [run for run in state.check_runs.values()
                if run["head_sha"] == match.group(1) and (name is None or run["name"] == name)]
        latest = {run["name"]: run for run in sorted(runs, key=lambda item: item["id"])}  # filter=latest
        public = [_public(run) for run in latest.values()]
        return 200, {"total_count": len(public), "check_runs": public}, {}
    if method == "POST" and rest == "check-runs":
        _validate(state, "github-checks-create.schema.json", body)
        run_id = next(state.ids)
        output = body.get("output") or {}
        state.check_runs[run_id] = {
            "id": run_id, "name": body["name"], "head_sha": body["head_sha"],
            "external_id": body.get("external_id", ""), "status": body.get("status", "queued"),
            "conclusion": body.get("conclusion"), "annotations": list(output.get("annotations", [])),
            "output": output, "updates": 0,
        }
        return 201, _public(state.check_runs[run_id]), {}
    if method == "PATCH" and (match := re.fullmatch(r"check-runs/(\d+)", rest)):
        _validate(state, "github-checks-update.schema.json", body)
        run = state.check_runs[int(match.group(1))]
        output = body.get("output") or {}
        run["annotations"] += output.get("annotations", [])
        run["output"] = {key: value for key, value in output.items() if key != "annotations"}
        run["updates"] += 1
        for key in ("status", "conclusion", "external_id"):
            if key in body:
                run[key] = body[key]
        return 200, _public(run), {}
    if (match := re.fullmatch(r"issues/(\d+)/comments", rest)):
        if method == "GET":
            return _page(state, list(state.comments.values()), query, base, path)
        comment_id = next(state.ids)
        state.comments[comment_id] = {"id": comment_id, "node_id": f"IC_{comment_id}", "body": body["body"],
                                      "user": dict(GITHUB_BOT), "author_association": "NONE",
                                      "created_at": WRITTEN_AT, "updated_at": WRITTEN_AT}
        return 201, state.comments[comment_id], {}
    if method == "PATCH" and (match := re.fullmatch(r"issues/comments/(\d+)", rest)):
        comment = state.comments[int(match.group(1))]
        comment["body"] = body["body"]
        return 200, comment, {}
    if method == "GET" and (match := re.fullmatch(r"pulls/(\d+)", rest)):
        return 200, {"number": int(match.group(1)), "user": {"login": state.pull_author, "type": "User"},
                     "commits": len(state.pull_commits)}, {}
    if method == "GET" and re.fullmatch(r"pulls/(\d+)/commits", rest):
        return _page(state, state.pull_commits[:250], query, base, path)  # GitHub lists at most 250
    if method == "GET" and re.fullmatch(r"pulls/(\d+)/comments", rest):
        return _page(state, list(state.review_comments.values()), query, base, path)
    if method == "POST" and re.fullmatch(r"pulls/(\d+)/reviews", rest):
        if body.get("event") == "COMMENT" and not body.get("body"):
            return 422, {"message": "body is required for COMMENT"}, {}
        state.reviews.append(body)
        for comment in body.get("comments", []):
            state.add_review_comment(comment["body"], "", comment["path"], comment["line"], bot=True)
        return 200, {"id": next(state.ids), "state": "COMMENTED"}, {}
    if (match := re.fullmatch(r"pulls/comments/(\d+)", rest)) and method in ("PATCH", "DELETE"):
        if method == "DELETE":
            del state.review_comments[int(match.group(1))]
            return 204, b"", {}
        state.review_comments[int(match.group(1))]["body"] = body["body"]
        return 200, state.review_comments[int(match.group(1))], {}
    if method == "POST" and re.fullmatch(r"issues/(\d+)/labels", rest):
        state.labels += [label for label in body["labels"] if label not in state.labels]
        return 200, [{"name": label} for label in state.labels], {}
    if method == "DELETE" and (match := re.fullmatch(r"issues/\d+/labels/(.+)", rest)):
        state.labels.remove(unquote(match.group(1)))  # absent: ValueError, answered 404 below
        return 200, [{"name": label} for label in state.labels], {}
    raise KeyError(rest)


def _gitlab(state: ForgeState, method: str, rest: str, query: dict[str, list[str]], body: Any, base: str,
            path: str) -> tuple[int, Any, dict[str, str]]:
    if method == "GET" and rest == "user":
        return 200, {"id": GITLAB_BOT_ID, "username": GITLAB_BOT_NAME}, {}
    if method == "GET" and (match := re.fullmatch(r"projects/[^/]+/members/all/(\d+)", rest)):
        level = state.members[int(match.group(1))]
        return 200, {"id": int(match.group(1)), "access_level": level}, {}
    if (match := re.fullmatch(r"projects/[^/]+/merge_requests/\d+/notes", rest)):
        if method == "GET":
            return _page(state, list(state.notes.values()), query, base, path)
        note_id = state.add_note(body["body"], GITLAB_BOT_ID, GITLAB_BOT_NAME)
        return 201, state.notes[note_id], {}
    if method == "PUT" and (match := re.fullmatch(r"projects/[^/]+/merge_requests/\d+/notes/(\d+)", rest)):
        note = state.notes[int(match.group(1))]
        note["body"] = body["body"]
        return 200, note, {}
    if method == "GET" and re.fullmatch(r"projects/[^/]+/merge_requests/\d+", rest):
        return 200, {"diff_refs": dict(state.diff_refs), "author": dict(state.mr_author)}, {}
    if method == "GET" and re.fullmatch(r"projects/[^/]+/merge_requests/\d+/commits", rest):
        return _page(state, state.mr_commits, query, base, path)
    if method == "GET" and (match := re.fullmatch(r"users/(\d+)", rest)):
        return 200, state.users[int(match.group(1))], {}
    if re.fullmatch(r"projects/[^/]+/merge_requests/\d+/discussions", rest):
        if method == "GET":
            return _page(state, list(state.discussions.values()), query, base, path)
        discussion_id = f"d{next(state.ids)}"
        state.discussions[discussion_id] = {"id": discussion_id, "notes": [{
            "id": next(state.ids), "body": body["body"], "system": False, "resolvable": True, "resolved": False,
            "position": body["position"], "author": {"id": GITLAB_BOT_ID, "username": GITLAB_BOT_NAME}}]}
        return 201, state.discussions[discussion_id], {}
    if method == "PUT" and (match := re.fullmatch(r"projects/[^/]+/merge_requests/\d+/discussions/(\w+)", rest)):
        resolved = query.get("resolved", [""])[0] == "true"
        for note in state.discussions[match.group(1)]["notes"]:
            note["resolved"] = resolved
        return 200, state.discussions[match.group(1)], {}
    if (match := re.fullmatch(r"projects/[^/]+/merge_requests/\d+/discussions/(\w+)/notes/(\d+)", rest)):
        discussion = state.discussions[match.group(1)]
        note = next(note for note in discussion["notes"] if note["id"] == int(match.group(2)))
        if method == "DELETE":
            discussion["notes"].remove(note)
            if not discussion["notes"]:
                del state.discussions[match.group(1)]
            return 204, b"", {}
        note["body"] = body["body"]
        return 200, note, {}
    if method == "PUT" and re.fullmatch(r"projects/[^/]+/merge_requests/\d+", rest):
        state.labels += [label for label in body.get("add_labels", "").split(",") if label]
        removed = set(body.get("remove_labels", "").split(","))
        state.labels[:] = [label for label in state.labels if label not in removed]
        return 200, {"labels": state.labels}, {}
    raise KeyError(unquote(rest))


class ForgeServer:
    """`with ForgeServer() as server:` serves `server.state` on `server.url` until the block ends."""

    def __init__(self, state: ForgeState | None = None) -> None:
        self.state = state or ForgeState()
        self._server = _Server(self.state)
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return _address(self._server)

    @property
    def gitlab_api_url(self) -> str:
        return f"{self.url}/api/v4"

    def __enter__(self) -> ForgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def github_environment(server: ForgeServer, directory: Path, number: int | None = 7,
                       token: str = "write-token", head_sha: str | None = None) -> dict[str, str]:
    """The variables a GitHub Actions `pull_request` job has, pointed at the stand-in server."""
    event = directory / "event.json"
    pull: dict[str, Any] = {"number": number}
    if head_sha:
        pull["head"] = {"sha": head_sha}
    payload: dict[str, Any] = {"pull_request": pull}
    if number is None:
        payload = {"ref": "refs/heads/x"}
    event.write_text(json.dumps(payload), encoding="utf-8")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request" if number is not None else "push",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_API_URL": server.url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "42",
        "GITHUB_TOKEN": token,
    }


def gitlab_environment(server: ForgeServer, iid: int = 3, token: str | None = "api-token",
                       job_token: str | None = None) -> dict[str, str]:
    """The variables a GitLab merge request pipeline job has, pointed at the stand-in server."""
    env = {
        "GITLAB_CI": "true",
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_API_V4_URL": server.gitlab_api_url,
        "CI_SERVER_URL": server.url,
        "CI_PROJECT_PATH": "group/app",
        "CI_MERGE_REQUEST_IID": str(iid),
        "CI_JOB_URL": "https://gitlab.example/group/app/-/jobs/1",
    }
    if token:
        env["GITLAB_TOKEN"] = token
    if job_token:
        env["CI_JOB_TOKEN"] = job_token
    return env


def fast_retry_config(directory: Path, extra: str = "", github: str = "", gitlab: str = "") -> Path:
    """A config file (outside the repository, so not part of the diff) with short retry waits;
    `github` / `gitlab` are more lines for those tables, `extra` more tables."""
    path = directory / "reviewgate.toml"
    path.write_text(
        f"[github]\nretry_backoff = 0.01\nmax_wait = 5\n{github}\n"
        f"[gitlab]\nretry_backoff = 0.01\nmax_wait = 5\n{gitlab}\n{extra}",
        encoding="utf-8",
    )
    return path


def run_on_github(repo: Path, directory: Path, server: ForgeServer, number: int | None = 7,
                  token: str = "write-token", head_sha: str | None = None) -> CliResult:
    """`reviewgate run --no-verify` as a GitHub pull request job against the stand-in, with the
    short retry waits of `fast_retry_config`."""
    env = github_environment(server, directory, number=number, token=token, head_sha=head_sha)
    return run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(directory)), env=env)
