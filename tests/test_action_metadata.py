"""action.yml is one the GitHub Marketplace publishes: a description of at most 125 characters and
a branding of a Feather icon and a colour from the sets the Marketplace offers
(docs.github.com, "Metadata syntax for GitHub Actions", branding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MARKETPLACE_DESCRIPTION_LIMIT = 125
BRANDING_COLORS = {"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}


def _action() -> dict[str, object]:
    document = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_the_description_fits_the_marketplace() -> None:
    description = str(_action()["description"])
    assert 0 < len(description) <= MARKETPLACE_DESCRIPTION_LIMIT, (len(description), description)
    assert "\n" not in description


def test_the_branding_is_an_icon_and_a_colour_the_marketplace_offers() -> None:
    branding = _action()["branding"]
    assert isinstance(branding, dict) and set(branding) == {"icon", "color"}
    assert branding["color"] in BRANDING_COLORS
    # The icon list GitHub accepts, as the action schema CI lints with (check-jsonschema) vendors it.
    check_jsonschema = pytest.importorskip("check_jsonschema", reason="the lint extra vendors the icon list")
    schema = json.loads((Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor" / "github-actions.json")
                        .read_text(encoding="utf-8"))
    assert branding["icon"] in schema["properties"]["branding"]["properties"]["icon"]["enum"]
