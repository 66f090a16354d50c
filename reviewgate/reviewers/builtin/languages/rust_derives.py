"""Rust trait impls that write out a derive the change removes: `#[derive(Clone, Debug)]` taken
off a type and `impl<S: Clone> Clone for Type<S>` written by hand, most often to drop the bound
the derive puts on every type parameter. A hand-written clone or debug listing does what the
derive generated (copy each field, show each field), so it is no new behaviour. Equality,
ordering, hashing and defaults written out are not read so: replacing their derive is how a type
chooses what it compares or starts from (an `eq` that leaves a field out).

The derives are read from the text, line by line, not from the syntax tree: a type declared inside
a macro (`pin_project! { #[derive(Debug)] pub struct Future { .. } }`) is a token tree to
tree-sitter, and its derive is removed all the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.languages.tree_family import text_of

if TYPE_CHECKING:
    from tree_sitter import Node

_DERIVE = LazyPattern(r"^\s*#\[\s*derive\s*\(([^)]*)\)\s*\]\s*$")
_ATTRIBUTE_OR_DOC = LazyPattern(r"^\s*(?:#\[|///|//!)")
# The derives whose hand-written twin only drops the derive's bounds.
WRITTEN_OUT_TRAITS = frozenset({"Clone", "Debug"})
_TYPE_ITEM = LazyPattern(r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:struct|enum|union)\s+([A-Za-z_]\w*)")


def derived_traits(text: str) -> dict[str, set[str]]:
    """The traits each type of a file derives, by the type's name: `#[derive(..)]` lines above a
    `struct`, `enum` or `union` (with only attributes and doc comments between), each trait by
    its last path segment (`fmt::Debug` is `Debug`)."""
    found: dict[str, set[str]] = {}
    pending: set[str] = set()
    for line in text.split("\n"):
        derive = _DERIVE.match(line)
        if derive is not None:
            pending |= {name.strip().rpartition("::")[2] for name in derive.group(1).split(",") if name.strip()}
            continue
        if _ATTRIBUTE_OR_DOC.match(line):
            continue
        item = _TYPE_ITEM.match(line)
        if item is not None and pending:
            found.setdefault(item.group(1), set()).update(pending)
        pending = set()
    return found


def removes_a_derive(removed_lines: list[str]) -> bool:
    """Whether any line the change removes is a derive attribute: only then is the file read."""
    return any(_DERIVE.match(line) for line in removed_lines)


def written_out_methods(base_text: str, head_root: Node) -> set[int]:
    """The first lines at head of the methods of each `impl Clone for Type` or `impl Debug for
    Type` whose derive the type had at the merge base and has no more at head."""
    from reviewgate.reviewers.builtin.languages.rust import impl_type_name

    before = derived_traits(base_text)
    if not before:
        return set()
    after = derived_traits(text_of(head_root))
    found: set[int] = set()
    stack = [head_root]
    while stack:
        node = stack.pop()
        if node.type in ("source_file", "mod_item", "declaration_list"):
            stack.extend(node.named_children)
            continue
        trait = node.child_by_field_name("trait") if node.type == "impl_item" else None
        kind = impl_type_name(node) if trait is not None else None
        if trait is None or kind is None:
            continue
        name = text_of(trait).partition("<")[0].strip().rpartition("::")[2]
        if name in WRITTEN_OUT_TRAITS and name in before.get(kind, set()) - after.get(kind, set()):
            body = node.child_by_field_name("body")
            found.update(
                method.start_point.row + 1
                for method in (body.named_children if body is not None else [])
                if method.type == "function_item"
            )
    return found
