"""Kinds of change that read as new behaviour without being any, and their look-alikes that are:
each judged on a real repository, blocking findings only (major or worse)."""

from __future__ import annotations

from pathlib import Path

from reviewgate.findings import Severity
from testing.lenses import review_change

_BLOCKING = (Severity.BLOCKER, Severity.MAJOR)


def _blocking(findings: list) -> list[tuple[str, str, int]]:  # type: ignore[type-arg]
    return sorted(
        (item.rule, item.path or "", item.line or 0)
        for item in findings  # type: ignore[misc]
        if item.rule.startswith("tests/") and item.severity in _BLOCKING
    )


_LIB = "pub fn derive(input: u8) -> u8 {\n    input\n}\n"
_IMPL = (
    "\nimpl{trait} {kind} {{\n    {visibility}fn to_tokens(&self, tokens: &mut Stream) {{\n"
    "        tokens.append(self.ident());\n    }}\n}}\n"
)


def _rust_type(visibility: str, trait: str = " ToTokens for", method: str = "") -> str:
    return _LIB + f"\n{visibility}struct Marker;\n" + _IMPL.format(trait=trait, kind="Marker", visibility=method)


def test_rust_methods_of_a_private_type_are_no_public_api(tmp_path: Path) -> None:
    base = {"derive/src/lib.rs": _LIB}
    for name, visibility, trait, method in [
        ("trait-impl", "", " ToTokens for", ""),
        ("pub-method", "", "", "pub "),
        ("crate-type", "pub(crate) ", "", "pub "),
    ]:
        branch = {"derive/src/lib.rs": _rust_type(visibility, trait, method)}
        assert _blocking(review_change(tmp_path / name, base, branch)) == [], name
    # The same impls of a public type are public API: new, untested, they block.
    for name, trait, method in [("public-trait-impl", " ToTokens for", ""), ("public-method", "", "pub ")]:
        branch = {"derive/src/lib.rs": _rust_type("pub ", trait, method)}
        assert _blocking(review_change(tmp_path / name, base, branch)) == [
            ("tests/missing-tests", "derive/src/lib.rs", 8)
        ], name


_CHAIN = (
    "pub fn visible(fields: &[Field]) -> Vec<Stream> {{\n{body}\n}}\n"
)


def test_an_iterator_chain_written_out_as_a_loop_makes_the_same_decisions(tmp_path: Path) -> None:
    chain = "    fields\n        .iter()\n        .filter(|field| !field.skipped())\n        .map(|field| field.tokens())\n        .collect()"
    loop = (
        "    let mut out = Vec::new();\n    for field in fields {\n        if field.skipped() {\n            continue;\n"
        "        }\n        out.push(field.tokens());\n    }\n    out"
    )
    base = {"derive/src/ser.rs": _CHAIN.format(body=chain)}
    assert _blocking(review_change(tmp_path / "rust", base, {"derive/src/ser.rs": _CHAIN.format(body=loop)})) == []
    script = {"src/fields.js": "export function visible(fields) {\n  return fields.filter((f) => !f.skipped).map((f) => f.tokens);\n}\n"}
    written_out = {"src/fields.js": (
        "export function visible(fields) {\n  const out = [];\n  for (const f of fields) {\n    if (f.skipped) {\n"
        "      continue;\n    }\n    out.push(f.tokens);\n  }\n  return out;\n}\n"
    )}
    assert _blocking(review_change(tmp_path / "js", script, written_out)) == []
    # A loop that decides more than the chain did (two conditions the chain never made) is new behaviour.
    stricter = (
        "    let mut out = Vec::new();\n    for field in fields {\n        if field.skipped() {\n            continue;\n"
        "        }\n        if field.flattened() {\n            out.extend(field.inner());\n        }\n"
        "        if field.renamed() {\n            out.push(field.alias());\n        }\n        out.push(field.tokens());\n    }\n    out"
    )
    assert _blocking(review_change(tmp_path / "stricter", base, {"derive/src/ser.rs": _CHAIN.format(body=stricter)})) == [
        ("tests/missing-tests", "derive/src/ser.rs", 2)
    ]
