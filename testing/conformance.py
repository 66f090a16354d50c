"""Load the format owners' schemas from ../shared/conformance, or skip with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _find_conformance() -> Path:
    """`../shared/conformance` beside the checkout; a git worktree nested deeper (such as
    /work/wt/issue-N beside /work/shared) finds the same folder further up."""
    for ancestor in REPO_ROOT.parents:
        if (ancestor / "shared" / "conformance").is_dir():
            return ancestor / "shared" / "conformance"
    return REPO_ROOT.parent / "shared" / "conformance"


CONFORMANCE_DIR = _find_conformance()
SCHEMA_DIR = REPO_ROOT / "reviewgate" / "schemas"


def conformance_file(name: str) -> Path:
    path = CONFORMANCE_DIR / name
    if not path.is_file():
        pytest.skip(f"conformance file {path} is absent (it lives in ../shared/conformance beside the checkout)")
    return path


def conformance_json(name: str) -> Any:
    return json.loads(conformance_file(name).read_text(encoding="utf-8"))


def our_schema(name: str) -> Any:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def validate_report(report: dict[str, Any]) -> None:
    """Validate report.json against our published schema, finding schema included."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    finding = our_schema("finding.schema.json")
    registry = Registry().with_resource(finding["$id"], Resource.from_contents(finding))
    Draft202012Validator(our_schema("report.schema.json"), registry=registry).validate(report)


def validate_junit(xml_text: str) -> None:
    """Validate against Jenkins' junit-10.xsd as it is: no attribute or element it does not declare."""
    import xml.etree.ElementTree as ElementTree

    import xmlschema

    schema = xmlschema.XMLSchema(str(conformance_file("junit-10.xsd")))
    root = ElementTree.fromstring(xml_text.encode("utf-8"))
    schema.validate(root)
