"""A Rust `Debug` impl is a developer's view of a value, no API a caller relies on: its `fmt` is
read as a helper of its size; and the look-alikes that stay public API. Real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.lenses import blocking_tests_findings, review_change

# tower-rs/tower b9c2fea0fc (#280), "Greatly improve Debug output of ServiceBuilder": the new
# `impl fmt::Debug for BufferLayer` lists its one field, and nothing else changes in the file.
_LAYER = """use std::{{fmt, marker::PhantomData}};

pub struct BufferLayer<Request, E> {{
    bound: usize,
    executor: E,
    _p: PhantomData<fn(Request)>,
}}

impl<Request, E> BufferLayer<Request, E> {{
    pub fn bound(&self) -> usize {{
        self.bound
    }}
}}
{added}"""

_LISTING = """
impl<Request, E> {trait} for BufferLayer<Request, E>
where
    E: fmt::Debug,
{{
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {{
{body}
    }}
}}
"""
_FIELDS = '        f.debug_struct("BufferLayer")\n            .field("bound", &self.bound)\n            .finish()'
_LONG = (
    '        let mut listing = f.debug_struct("BufferLayer");\n'
    '        listing.field("bound", &self.bound);\n'
    '        if self.bound > 0 {\n            listing.field("executor", &self.executor);\n        }\n'
    '        listing.field("capacity", &self.bound.saturating_sub(1));\n'
    '        listing.field("full", &(self.bound == 0));\n'
    '        listing.finish()'
)


@pytest.mark.parametrize(("name", "trait", "body", "blocks"), [
    ("debug", "fmt::Debug", _FIELDS, False),
    ("debug-by-path", "std::fmt::Debug", _FIELDS, False),
    # Look-alikes: `Display` is the text a user reads, and a listing that works things out (five
    # statements and a decision) is code of its own size.
    ("display", "fmt::Display", _FIELDS, True),
    ("long-debug", "fmt::Debug", _LONG, True),
])
def test_a_debug_listing_is_no_public_api(tmp_path: Path, name: str, trait: str, body: str, blocks: bool) -> None:
    path = "tower-buffer/src/layer.rs"
    base = {"Cargo.toml": '[package]\nname = "tower-buffer"\nversion = "0.1.0"\n', path: _LAYER.format(added="")}
    added = _LISTING.format(trait=trait, body=body)
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _LAYER.format(added=added)}))
    assert found == ([("tests/missing-tests", path, 19)] if blocks else []), name
