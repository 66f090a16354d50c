"""The GitHub REST calls reviewgate makes, and nothing else (docs.github.com REST: Checks,
Issues comments, Pull request review comments, Labels). API version pinned by header."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from reviewgate.forge.conversation import GITHUB_TRUSTED_ASSOCIATIONS, Comment, is_trusted_login
from reviewgate.forge.http import DEFAULT_POLICY, Budget, ForgeError, ForgeNotFound, RestClient, RetryPolicy

API_VERSION = "2022-11-28"


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


def github_comment(data: dict[str, Any], trusted_logins: tuple[str, ...]) -> Comment:
    user = data.get("user") if isinstance(data.get("user"), dict) else {}
    login = str((user or {}).get("login") or "")
    association = str(data.get("author_association") or "")
    trusted = association in GITHUB_TRUSTED_ASSOCIATIONS or is_trusted_login(login, trusted_logins)
    return Comment(id=int(data.get("id") or 0), author=login, body=str(data.get("body") or ""),
                   trusted=trusted, created_at=str(data.get("created_at") or ""))


def is_bot(data: dict[str, Any]) -> bool:
    """Comments by a GitHub App (GITHUB_TOKEN writes as github-actions[bot]); people cannot post as one."""
    user = data.get("user")
    return isinstance(user, dict) and user.get("type") == "Bot"
