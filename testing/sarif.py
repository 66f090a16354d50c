"""Build SARIF 2.1.0 logs for tests, shaped like the ones ruff, eslint and CodeQL write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif_result(
    rule_id: str,
    message: str,
    uri: str,
    line: int,
    *,
    level: str | None = "warning",
    end_line: int | None = None,
    suppressions: list[dict[str, Any]] | None = None,
    uri_base_id: str | None = None,
) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line}
    if end_line is not None:
        region["endLine"] = end_line
    artifact: dict[str, Any] = {"uri": uri}
    if uri_base_id is not None:
        artifact["uriBaseId"] = uri_base_id
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
    }
    if level is not None:
        result["level"] = level
    if suppressions is not None:
        result["suppressions"] = suppressions
    return result


def sarif_log(tool: str, results: list[dict[str, Any]], **run_fields: Any) -> dict[str, Any]:
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": tool, "rules": []}}, "results": results, **run_fields}],
    }


def write_sarif(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path
