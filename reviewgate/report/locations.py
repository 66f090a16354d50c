"""A finding's place as a link to the line at the reviewed head, where the forge's web address
is known (GitHub Actions, GitLab CI); plain text anywhere else (a local run).

GitHub: `{server}/{repository}/blob/{sha}/{path}#L{line}-L{end}`; GitLab:
`{project}/-/blob/{sha}/{path}#L{line}-{end}`, where the project's address is
`CI_SERVER_URL/CI_PROJECT_PATH` (the same as GitLab's `CI_PROJECT_URL`).
"""

from __future__ import annotations

from reviewgate.ci.context import CiContext
from reviewgate.escaping import markdown_code, markdown_link, url_path
from reviewgate.findings import Finding


def blob_address(ci: CiContext) -> str | None:
    """The web address files at a commit sit under, ending in `/blob/`; None when the CI did not
    say where the repository is, or gave an address that is not http(s)."""
    server, repository = (ci.server_url or "").rstrip("/"), ci.repository
    if not repository or not server.startswith(("https://", "http://")):
        return None
    if ci.is_github:
        return f"{server}/{url_path(repository)}/blob/"
    if ci.is_gitlab:
        return f"{server}/{url_path(repository)}/-/blob/"
    return None


def line_address(ci: CiContext, head_sha: str, finding: Finding) -> str | None:
    """The address of the finding's lines at `head_sha`; None for a finding on the change as a
    whole, or when the repository's address is unknown."""
    base = blob_address(ci)
    if base is None or finding.path is None:
        return None
    address = f"{base}{url_path(head_sha)}/{url_path(finding.path)}"
    if finding.line is None:
        return address
    end = finding.end_line if finding.end_line is not None and finding.end_line > finding.line else None
    if end is None:
        return f"{address}#L{finding.line}"
    return f"{address}#L{finding.line}-L{end}" if ci.is_github else f"{address}#L{finding.line}-{end}"


def location_markdown(ci: CiContext, head_sha: str, finding: Finding, in_table: bool = False) -> str:
    """`path:line` as a code span, linked to the line at the head when the address is known."""
    address = line_address(ci, head_sha, finding)
    return (markdown_link(finding.location, address, in_table) if address
            else markdown_code(finding.location, in_table))
