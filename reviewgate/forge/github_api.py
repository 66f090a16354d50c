"""The GitHub REST calls reviewgate makes, and nothing else (docs.github.com REST: Checks,
Issues comments, Pull request review comments, Labels). API version pinned by header."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from reviewgate.forge.conversation import (
    EDITOR_UNKNOWN,
    GITHUB_TRUSTED_ASSOCIATIONS,
    ChangeAuthors,
    Comment,
    change_authors,
    changed_after_creation,
    edited_by,
    is_trusted_login,
)
from reviewgate.forge.http import DEFAULT_POLICY, Budget, ForgeError, ForgeNotFound, RestClient, RetryPolicy

API_VERSION = "2022-11-28"
# GraphQL `nodes(ids:)` takes at most 100 ids; a comment's edit history is read up to as many.
GRAPHQL_PAGE = 100
_EDITORS_QUERY = (
    "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Comment { id lastEditedAt editor { login } "
    f"userContentEdits(first: {GRAPHQL_PAGE}) {{ totalCount nodes {{ editor {{ login }} }} }} }} }} }}"
)


class GithubApi:
    def __init__(self, api_url: str, repository: str, token: str,
                 policy: RetryPolicy = DEFAULT_POLICY, budget: Budget | None = None) -> None:
        self.repository = repository
        self.client = RestClient(
            api_url,
            {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
             "X-GitHub-Api-Version": API_VERSION},
            policy,
            budget=budget,
        )

    def _repo(self, path: str) -> str:
        return f"repos/{self.repository}/{path}"

    def repository_info(self) -> dict[str, Any]:
        """GET /repos/{owner}/{repo}: the cheapest call that proves the token reaches the repository."""
        data = self.client.request("GET", f"repos/{self.repository}").data
        return data if isinstance(data, dict) else {}

    # Checks: https://docs.github.com/en/rest/checks/runs
    def check_runs_for(self, sha: str, name: str) -> list[dict[str, Any]]:
        response = self.client.request(
            "GET", self._repo(f"commits/{sha}/check-runs"), params={"check_name": name, "per_page": 100}
        )
        runs = response.data.get("check_runs", []) if isinstance(response.data, dict) else []
        return [run for run in runs if isinstance(run, dict)]

    def create_check_run(self, body: dict[str, Any]) -> dict[str, Any]:
        data = self.client.request("POST", self._repo("check-runs"), body=body).data
        return data if isinstance(data, dict) else {}

    def update_check_run(self, check_run_id: int, body: dict[str, Any]) -> None:
        """The update that completes a run is essential: it gets a try past a spent budget."""
        self.client.request("PATCH", self._repo(f"check-runs/{check_run_id}"), body=body,
                            essential=body.get("status") == "completed")

    # Comments: https://docs.github.com/en/rest/issues/comments and .../pulls/comments
    def issue_comments(self, number: int) -> Iterator[dict[str, Any]]:
        yield from self.client.paginate(self._repo(f"issues/{number}/comments"))

    def review_comments(self, number: int) -> Iterator[dict[str, Any]]:
        yield from self.client.paginate(self._repo(f"pulls/{number}/comments"))

    # The change's authors: https://docs.github.com/en/rest/pulls/pulls (at most 250 commits listed)
    def pull_request(self, number: int) -> dict[str, Any]:
        data = self.client.request("GET", self._repo(f"pulls/{number}")).data
        return data if isinstance(data, dict) else {}

    def pull_request_commits(self, number: int) -> Iterator[dict[str, Any]]:
        yield from self.client.paginate(self._repo(f"pulls/{number}/commits"))

    def comment_editors(self, node_ids: list[str]) -> dict[str, list[str] | None]:
        """GraphQL: for each comment, the logins of everyone who edited it ([] for none), or None
        when the history is not whole (a deleted editor, more edits than one page)."""
        editors: dict[str, list[str] | None] = {}
        for start in range(0, len(node_ids), GRAPHQL_PAGE):
            response = self.client.request("POST", graphql_url(self.client.api_url), body={
                "query": _EDITORS_QUERY, "variables": {"ids": node_ids[start:start + GRAPHQL_PAGE]}})
            data = response.data if isinstance(response.data, dict) else {}
            if data.get("errors"):
                raise ForgeError(f"POST graphql comment edits: {str(data['errors'])[:200]}")
            nodes = (data.get("data") or {}).get("nodes") or []
            for node in nodes:
                if isinstance(node, dict) and isinstance(node.get("id"), str):
                    editors[node["id"]] = _editors(node)
        return editors

    def create_comment(self, number: int, body: str) -> int:
        data = self.client.request("POST", self._repo(f"issues/{number}/comments"), body={"body": body}).data
        return int(data["id"]) if isinstance(data, dict) and "id" in data else 0

    def edit_comment(self, comment_id: int, body: str) -> None:
        self.client.request("PATCH", self._repo(f"issues/comments/{comment_id}"), body={"body": body})

    # Review comments: https://docs.github.com/en/rest/pulls/reviews and .../pulls/comments
    def create_review(self, number: int, commit_id: str, body: str, comments: list[dict[str, Any]]) -> None:
        """One review of event COMMENT carrying line comments: one request for many comments
        (each comment alone would count against the content-creation rate limit)."""
        self.client.request("POST", self._repo(f"pulls/{number}/reviews"),
                            body={"commit_id": commit_id, "event": "COMMENT", "body": body, "comments": comments})

    def edit_review_comment(self, comment_id: int, body: str) -> None:
        self.client.request("PATCH", self._repo(f"pulls/comments/{comment_id}"), body={"body": body})

    def delete_review_comment(self, comment_id: int) -> None:
        try:
            self.client.request("DELETE", self._repo(f"pulls/comments/{comment_id}"))
        except ForgeNotFound:
            pass  # deleted meanwhile: what we wanted

    def minimize_comment(self, node_id: str) -> None:
        """GraphQL `minimizeComment` with classifier OUTDATED: REST cannot hide a comment."""
        query = ("mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) "
                 "{ minimizedComment { isMinimized } } }")
        response = self.client.request("POST", graphql_url(self.client.api_url),
                                       body={"query": query, "variables": {"id": node_id}})
        errors = response.data.get("errors") if isinstance(response.data, dict) else None
        if errors:
            raise ForgeError(f"POST graphql minimizeComment: {str(errors)[:200]}")

    # Labels: https://docs.github.com/en/rest/issues/labels#add-labels-to-an-issue
    def add_labels(self, number: int, labels: list[str]) -> None:
        self.client.request("POST", self._repo(f"issues/{number}/labels"), body={"labels": labels})

    def remove_label(self, number: int, label: str) -> None:
        """DELETE /repos/{owner}/{repo}/issues/{number}/labels/{name}; absent already is fine."""
        try:
            self.client.request("DELETE", self._repo(f"issues/{number}/labels/{quote(label, safe='')}"))
        except ForgeNotFound:
            pass  # the label is not on the pull request (a person removed it)


def graphql_url(api_url: str) -> str:
    """GitHub: https://api.github.com/graphql; Enterprise Server: https://HOST/api/graphql
    beside https://HOST/api/v3."""
    root = api_url.rstrip("/")
    if root.endswith("/api/v3"):
        return root[: -len("/v3")] + "/graphql"
    return f"{root}/graphql"


def _login(data: object) -> str:
    return str(data.get("login") or "") if isinstance(data, dict) else ""


def _editors(node: dict[str, Any]) -> list[str] | None:
    if node.get("lastEditedAt") is None:
        return []  # its text was never edited (updated_at moved for another reason)
    edits = node.get("userContentEdits") if isinstance(node.get("userContentEdits"), dict) else {}
    entries = [item for item in (edits or {}).get("nodes") or [] if isinstance(item, dict)]
    logins = [_login(item.get("editor")) for item in entries] + [_login(node.get("editor"))]
    if not entries or (edits or {}).get("totalCount") != len(entries) or not all(logins):
        return None
    return logins


def github_comment(data: dict[str, Any], trusted_logins: tuple[str, ...]) -> Comment:
    """REST says that a comment changed after it was written, never who changed it: an edited
    comment is marked EDITOR_UNKNOWN until GraphQL names its editors (with_editors)."""
    login = _login(data.get("user"))
    association = str(data.get("author_association") or "")
    trusted = association in GITHUB_TRUSTED_ASSOCIATIONS or is_trusted_login(login, trusted_logins)
    edited = EDITOR_UNKNOWN if changed_after_creation(data.get("created_at"), data.get("updated_at")) else ""
    return Comment(id=int(data.get("id") or 0), author=login, body=str(data.get("body") or ""),
                   trusted=trusted, created_at=str(data.get("created_at") or ""), edited=edited)


def with_editors(comment: Comment, editors: list[str] | None) -> Comment:
    """The comment as GraphQL's edit history shows it: its own words when only its author
    edited it; someone else's edit is named."""
    if editors is None:
        return comment
    others = [login for login in editors if login.lower() != comment.author.lower()]
    return replace(comment, edited=edited_by(others) if others else "")


def github_change_authors(pull: dict[str, Any], commits: list[dict[str, Any]]) -> ChangeAuthors:
    """The PR's author and every commit's author and committer, by login. A commit whose email
    GitHub links to no account names no login: nobody can be matched to it (a comment has a
    login, never an email). A list cut short (the API lists at most 250 commits) is unknown."""
    listed = pull.get("commits")
    if isinstance(listed, int) and listed > len(commits):
        return ChangeAuthors(unknown=f"the pull request has {listed} commits and the API lists {len(commits)}")
    author = _login(pull.get("user"))
    if not author:
        return ChangeAuthors(unknown="the API did not name the pull request's author")
    logins = [author] + [_login(item.get(role)) for item in commits for role in ("author", "committer")]
    emails = [str(person.get("email") or "") for item in commits
              if isinstance(item.get("commit"), dict)
              for person in (item["commit"].get("author"), item["commit"].get("committer"))
              if isinstance(person, dict)]
    return change_authors(logins, emails)


def is_bot(data: dict[str, Any]) -> bool:
    """Comments by a GitHub App (GITHUB_TOKEN writes as github-actions[bot]); people cannot post as one."""
    user = data.get("user")
    return isinstance(user, dict) and user.get("type") == "Bot"
