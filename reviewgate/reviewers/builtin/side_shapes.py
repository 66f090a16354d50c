"""A changed file's function shapes at each side, read once: at head (only the added statements where
that tells the base side too) and at the merge base."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Mapping

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import FileChange
from reviewgate.reviewers.builtin.changed_lines import only_inserts
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.languages.python_insertions import inserts_only
from reviewgate.reviewers.builtin.languages.python_shapes import python_shapes
from reviewgate.reviewers.builtin.languages.shapes import (
    HeadShapes,
    PackedShapes,
    Remade,
    Shapes,
    packed,
    settle,
    unpacked,
)
from reviewgate.reviewers.builtin.python_parsing import parse_python, touched_python


def shapes_of(text: str, path: str, language: Language) -> Shapes | None:
    """The functions of one side of a file; None when it does not parse."""
    return _settled(_tree_shapes_of(text, path, language), lambda: _tree_shapes_of(text, path, language))


def _settled(shapes: Shapes | None, make: Callable[[], Shapes | None]) -> Shapes | None:
    """`shapes` let go of their syntax tree (`settle`): a change's shapes are held until the whole
    change is compared, and its trees all at once were most of a large review's memory."""
    return None if shapes is None else settle(shapes, Remade(make))


def _tree_shapes_of(text: str, path: str, language: Language) -> Shapes | None:
    if language is Language.PYTHON:
        tree = parse_python(text, path)
        return None if tree is None else python_shapes(tree, text)
    # tree-sitter for the other languages: a change with no such file never loads it.
    from reviewgate.reviewers.builtin.languages.tree_shapes import shapes_of_file

    return shapes_of_file(text, path)


def head_shapes_of(request: ReviewRequest, change: FileChange) -> Shapes | None:
    """The functions of a changed file at head; None when it is missing or does not parse."""
    return _head_shapes(request, change, language_of(change.path))


def _head_shapes(request: ReviewRequest, change: FileChange, language: Language) -> Shapes | None:
    made = _head_tree_shapes(request, change, language, with_base=True)
    # Remade from the tree they were made from: the touched statements' shapes are the whole
    # module's of the same names (`_touched_shapes`), but parsing it all again is what they spared.
    with_base = isinstance(made, HeadShapes)
    return _settled(made, lambda: _head_tree_shapes(request, change, language, with_base=with_base))


def head_shapes_unpacked(request: ReviewRequest, change: FileChange, shapes: PackedShapes) -> Shapes:
    """A changed file's head shapes another process made (head_shapes_of, then `packed`), remade
    here from the same tree when asked for what they did not keep, as `_head_shapes` remakes them."""
    language = language_of(change.path)
    return unpacked(shapes, Remade(lambda: _head_tree_shapes(request, change, language, with_base=shapes.head_shapes)))


def sent_shapes(shapes: Shapes) -> bytes:
    """Settled shapes to send to another process (`packed`, pickled apart from the rest of what is
    sent, so the receiver reads them only if it asks: HeadShapesByPath)."""
    return pickle.dumps(packed(shapes), protocol=pickle.HIGHEST_PROTOCOL)


class HeadShapesByPath(Mapping[str, "Shapes | None"]):
    """The head side's shapes by path (`made`), and those another process sent (`sent`, with their
    file's change: sent_shapes) unpacked when first asked for (head_shapes_unpacked): never, when the
    tests lens was told every file's evidence (behaviour.told_evidence)."""

    def __init__(
        self,
        request: ReviewRequest,
        made: dict[str, Shapes | None],
        sent: dict[str, tuple[FileChange, bytes]],
    ) -> None:
        self._request, self._made, self._sent = request, made, sent

    def __getitem__(self, path: str) -> Shapes | None:
        if path in self._sent:
            change, data = self._sent.pop(path)
            self._made[path] = head_shapes_unpacked(self._request, change, pickle.loads(data))  # noqa: S301 - our own worker's
        return self._made[path]

    def __contains__(self, path: object) -> bool:
        return path in self._made

    def __iter__(self) -> Iterator[str]:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)


def _head_tree_shapes(
    request: ReviewRequest, change: FileChange, language: Language, *, with_base: bool = False
) -> Shapes | None:
    """`with_base`: HeadShapes when they tell the base side's functions too (python_insertions.inserts_only)."""
    if language is Language.PYTHON:
        source = request.head.read_text(change.path)
        if source is None:
            return None
        if with_base and (touched := _touched_shapes(change, source)) is not None:
            return touched
        tree = parse_python(source, change.path)  # the tree the other lenses share
        if tree is None:
            return None
        shapes = python_shapes(tree, source)
        if with_base and only_inserts(change) and inserts_only(tree, source, change.added_lines()):
            return HeadShapes(shapes)
        return shapes
    text = request.head.read_text(change.path)
    return None if text is None else _tree_shapes_of(text, change.path, language)


def _touched_shapes(change: FileChange, source: str) -> HeadShapes | None:
    """HeadShapes of only the statements the change adds whole (python_parsing.touched_python): the others'
    functions are the same at both sides, which compare equal and give no evidence. So when no
    name they define is one the added statements define too (`name#2` numbers a name's functions
    in file order), and the base side is the head's less the added statements (inserts_only, which
    reads only the statements holding added lines)."""
    touched = touched_python(change, source)
    if touched is None or not inserts_only(touched.tree, source, change.added_lines()):
        return None
    shapes = python_shapes(touched.tree, source)
    if any(name.partition("#")[0].partition(".")[0] in touched.other_names for name in shapes):
        return None
    return HeadShapes(shapes)
