"""The GitLab REST v4 calls reviewgate makes (docs.gitlab.com/api: Notes, Project members,
Merge requests). The API root comes from CI_API_V4_URL, so self-managed instances work."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from reviewgate.forge.conversation import (
    EDITOR_UNKNOWN,
    GITLAB_DEVELOPER_ACCESS,
    ChangeAuthors,
    Comment,
    change_authors,
    changed_after_creation,
    edited_by,
    is_trusted_login,
)
from reviewgate.forge.http import DEFAULT_POLICY, Budget, ForgeDenied, ForgeNotFound, RestClient, RetryPolicy


class GitlabApi:
    def __init__(self, api_url: str, project: str, token: str, policy: RetryPolicy = DEFAULT_POLICY,
                 budget: Budget | None = None) -> None:
        # A project is addressed by its URL-encoded path (REST "Namespaced paths").
        self.project = quote(project, safe="")
        self.client = RestClient(api_url, {"PRIVATE-TOKEN": token}, policy, budget=budget)
        self._access: dict[int, int] = {}
        self._emails: dict[int, frozenset[str]] = {}

    def _mr(self, iid: int, path: str = "") -> str:
        return f"projects/{self.project}/merge_requests/{iid}{path}"

    def notes(self, iid: int) -> Iterator[dict[str, Any]]:
        yield from self.client.paginate(self._mr(iid, "/notes"), {"sort": "asc", "order_by": "created_at"})

    def create_note(self, iid: int, body: str) -> int:
        data = self.client.request("POST", self._mr(iid, "/notes"), body={"body": body}).data
        return int(data["id"]) if isinstance(data, dict) and "id" in data else 0

    def edit_note(self, iid: int, note_id: int, body: str) -> None:
        self.client.request("PUT", self._mr(iid, f"/notes/{note_id}"), body={"body": body})

    # Discussions on the diff: https://docs.gitlab.com/api/discussions/#merge-requests
    def merge_request(self, iid: int) -> dict[str, Any]:
        data = self.client.request("GET", self._mr(iid)).data
        return data if isinstance(data, dict) else {}

    def diff_refs(self, iid: int) -> dict[str, str]:
        """The MR's latest version: base, start and head SHA, which a diff position must name."""
        refs = self.merge_request(iid).get("diff_refs")
        return {key: str(value) for key, value in refs.items() if value} if isinstance(refs, dict) else {}

    def merge_request_commits(self, iid: int) -> Iterator[dict[str, Any]]:
        yield from self.client.paginate(self._mr(iid, "/commits"))

    def user_emails(self, user_id: int) -> frozenset[str]:
        """GET /users/:id: the public email, and the others when the token may see them (an
        administrator's); none when the user cannot be read."""
        if user_id not in self._emails:
            try:
                data = self.client.request("GET", f"users/{user_id}").data
            except (ForgeDenied, ForgeNotFound):
                data = None
            self._emails[user_id] = _emails(data)
        return self._emails[user_id]

    def discussions(self, iid: int) -> Iterator[dict[str, Any]]:
        yield from self.client.paginate(self._mr(iid, "/discussions"))

    def create_discussion(self, iid: int, body: str, position: dict[str, Any]) -> None:
        self.client.request("POST", self._mr(iid, "/discussions"), body={"body": body, "position": position})

    def edit_discussion_note(self, iid: int, discussion_id: str, note_id: int, body: str) -> None:
        self.client.request("PUT", self._mr(iid, f"/discussions/{discussion_id}/notes/{note_id}"),
                            body={"body": body})

    def delete_discussion_note(self, iid: int, discussion_id: str, note_id: int) -> None:
        try:
            self.client.request("DELETE", self._mr(iid, f"/discussions/{discussion_id}/notes/{note_id}"))
        except ForgeNotFound:
            pass  # deleted meanwhile: what we wanted

    def resolve_discussion(self, iid: int, discussion_id: str, resolved: bool) -> None:
        self.client.request("PUT", self._mr(iid, f"/discussions/{discussion_id}"),
                            params={"resolved": "true" if resolved else "false"})

    def add_labels(self, iid: int, labels: list[str]) -> None:
        self.client.request("PUT", self._mr(iid), body={"add_labels": ",".join(labels)})

    def remove_label(self, iid: int, label: str) -> None:
        self.client.request("PUT", self._mr(iid), body={"remove_labels": label})

    def current_username(self) -> str:
        data = self.client.request("GET", "user").data
        return str(data.get("username") or "") if isinstance(data, dict) else ""

    def access_level(self, user_id: int) -> int:
        """The member's effective access level, inherited memberships included; 0 for none."""
        if user_id not in self._access:
            try:
                data = self.client.request("GET", f"projects/{self.project}/members/all/{user_id}").data
            except (ForgeDenied, ForgeNotFound):
                data = None
            level = data.get("access_level") if isinstance(data, dict) else 0
            self._access[user_id] = level if isinstance(level, int) else 0
        return self._access[user_id]

    def comment(self, data: dict[str, Any], trusted_logins: tuple[str, ...]) -> Comment:
        author = data.get("author") if isinstance(data.get("author"), dict) else {}
        username = str((author or {}).get("username") or "")
        user_id = (author or {}).get("id")
        trusted = is_trusted_login(username, trusted_logins) or (
            isinstance(user_id, int) and self.access_level(user_id) >= GITLAB_DEVELOPER_ACCESS
        )
        return Comment(id=int(data.get("id") or 0), author=username, body=str(data.get("body") or ""),
                       trusted=trusted, created_at=str(data.get("created_at") or ""), edited=note_edited(data),
                       emails=_emails(author))


_EMAIL_KEYS = ("email", "public_email", "commit_email")


def _emails(data: object) -> frozenset[str]:
    if not isinstance(data, dict):
        return frozenset()
    return frozenset(str(data[key]).lower() for key in _EMAIL_KEYS if isinstance(data.get(key), str) and data[key])


def note_edited(data: dict[str, Any]) -> str:
    """A note whose `updated_at` is not its `created_at` changed after it was written. The REST
    note names no editor (GitLab's own pages get `last_edited_by`; taken when a note has it), so
    the editor is unknown. GitLab also moves `updated_at` when a thread is resolved."""
    editor = data.get("last_edited_by")
    author = data.get("author") if isinstance(data.get("author"), dict) else {}
    if isinstance(editor, dict) and editor.get("username"):
        same = str(editor["username"]).lower() == str((author or {}).get("username") or "").lower()
        return "" if same else edited_by([str(editor["username"])])
    return EDITOR_UNKNOWN if changed_after_creation(data.get("created_at"), data.get("updated_at")) else ""


def gitlab_change_authors(merge_request: dict[str, Any], commits: list[dict[str, Any]]) -> ChangeAuthors:
    """The MR's author by username, and every commit's author and committer by email (GitLab's
    commit list names no user): matched against the emails a note author's profile shows."""
    author = merge_request.get("author") if isinstance(merge_request.get("author"), dict) else {}
    username = str((author or {}).get("username") or "")
    if not username:
        return ChangeAuthors(unknown="the API did not name the merge request's author")
    emails = [str(item.get(key) or "") for item in commits for key in ("author_email", "committer_email")]
    return change_authors([username], [*emails, *_emails(author)])
