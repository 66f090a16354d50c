"""Who wrote the change, and who wrote an overruling comment's words: asked of the forge only
when a trusted comment's own text asks to overrule (ACCEPTED: or REVIEW-REJECTED:), so a
conversation without one costs no request. What cannot be learnt refuses the overrule (the
change's authors unknown; an edit whose editor is unknown), never allows it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reviewgate.forge.conversation import EDITOR_UNKNOWN, ChangeAuthors, Comment, asks_to_overrule
from reviewgate.forge.github_api import GithubApi, github_change_authors, with_editors
from reviewgate.forge.gitlab_api import GitlabApi, gitlab_change_authors
from reviewgate.forge.http import ForgeError


def _asking(comments: list[Comment]) -> list[int]:
    return [index for index, comment in enumerate(comments) if comment.trusted and asks_to_overrule(comment.body)]


def github_authorship(api: GithubApi, number: int, raw: list[dict[str, Any]],
                      comments: list[Comment]) -> tuple[ChangeAuthors, list[Comment]]:
    """The PR's authors (its author, its commits' authors and committers), and the comments,
    `raw` item for item, with their editors where GraphQL names them."""
    asking = _asking(comments)
    if not asking:
        return ChangeAuthors(), comments
    try:
        authors = github_change_authors(api.pull_request(number), list(api.pull_request_commits(number)))
    except ForgeError as error:
        authors = ChangeAuthors(unknown=f"GitHub: {error}")
    edited = {str(raw[index]["node_id"]): index for index in asking
              if comments[index].edited == EDITOR_UNKNOWN and isinstance(raw[index].get("node_id"), str)}
    if not edited:
        return authors, comments
    try:
        editors = api.comment_editors(list(edited))
    except ForgeError:
        editors = {}  # REST alone: the editor stays unknown, and the comment overrules nothing
    named = list(comments)
    for node, index in edited.items():
        if node in editors:
            named[index] = with_editors(comments[index], editors[node])
    return authors, named


def gitlab_authorship(api: GitlabApi, iid: int, raw: list[dict[str, Any]],
                      comments: list[Comment]) -> tuple[ChangeAuthors, list[Comment]]:
    """The MR's authors (its author by username, its commits' authors and committers by email),
    and the comments with their authors' emails from their profiles."""
    asking = _asking(comments)
    if not asking:
        return ChangeAuthors(), comments
    try:
        authors = gitlab_change_authors(api.merge_request(iid), list(api.merge_request_commits(iid)))
    except ForgeError as error:
        return ChangeAuthors(unknown=f"GitLab: {error}"), comments
    named = list(comments)
    for index in asking:
        author = raw[index].get("author")
        user_id = author.get("id") if isinstance(author, dict) else None
        if isinstance(user_id, int):
            try:
                emails = api.user_emails(user_id)
            except ForgeError as error:
                return ChangeAuthors(unknown=f"GitLab: {error}"), comments
            named[index] = replace(comments[index], emails=comments[index].emails | emails)
    return authors, named
