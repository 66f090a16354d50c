"""What one side of a file says about its functions, in every language the tests lens reads: the
shape the behaviour comparison (function_comparison.py) holds the merge base and head against."""

from __future__ import annotations

import bisect
import copy
import functools
from collections.abc import Callable, Set
from functools import cached_property
from typing import NamedTuple


def _no_defaults() -> tuple[tuple[str, str], ...]:
    return ()


class FunctionShape:
    """One function or method at one side of the change. Counts, the normalised body and the
    defaults cost a walk of the function: they are computed when a comparison needs them, which
    is only for functions whose text changed or that are new."""

    def __init__(
        self,
        *,
        name: str,
        line: int,
        end_line: int,
        text: str,
        counts: Callable[[], tuple[int, int]],
        public: bool,
        body: Callable[[], str],
        defaults: Callable[[], tuple[tuple[str, str], ...]] = _no_defaults,
        trivial: bool | Callable[[], bool] = False,
    ) -> None:
        self.name = name  # qualified: `Class.method`, `Receiver.Method`, `outer.inner`
        self.line = line
        self.end_line = end_line
        self.text = text  # the source as written, indentation aside: equal means untouched
        self._counts = counts
        self.public = public
        self._trivial = trivial  # a walk of the body for tree-sitter's languages: asked of new ones only
        self._body = body
        self._defaults = defaults

    @cached_property
    def trivial(self) -> bool:
        """A stub (`...`, `pass`, a raise of the not-implemented error) or a bare accessor
        (`return self._name`): new, it is weak evidence of behaviour even when public."""
        return self._trivial if isinstance(self._trivial, bool) else self._trivial()

    @cached_property
    def _counted(self) -> tuple[int, int]:
        return self._counts()

    @property
    def branches(self) -> int:
        """if/elif/case/catch/loops/boolean operators/conditional expressions."""
        return self._counted[0]

    @property
    def statements(self) -> int:
        return self._counted[1]

    @cached_property
    def body(self) -> str:
        """No positions, comments, docstrings, annotations or string texts, local names numbered:
        equal bodies mean the same behaviour (a move, a rename, a reformat)."""
        return self._body()

    @cached_property
    def defaults(self) -> tuple[tuple[str, str], ...]:
        """Parameter name -> normalised default value."""
        return self._defaults()


# Qualified name -> shape. Two functions of one name in one scope (an overload, a property
# setter) get `name#2`, `name#3` in order, so each side pairs them the same way.
Shapes = dict[str, FunctionShape]


def add_shape(shapes: Shapes, shape: FunctionShape) -> None:
    name, count = shape.name, 1
    while name in shapes:
        count += 1
        name = f"{shape.name}#{count}"
    shape.name = name
    shapes[name] = shape


class HeadShapes(dict[str, FunctionShape]):
    """A file's functions at head when its change only inserts whole statements between the base
    side's (python_insertions.inserts_only): the base side's functions are these less the added ones
    (`base_side`), and the base side need not be parsed."""


def base_side(head: Shapes, added: Set[int]) -> Shapes:
    """The base side's functions of a file whose change only inserts whole statements (HeadShapes):
    each head function not made of added lines, at its line less the added lines above it, numbered
    (`name#2`) among the base side's alone. A copy shares what the head's computed or will remake."""
    numbers = sorted(added)
    base: Shapes = {}
    for shape in head.values():
        if shape.line in added:
            continue  # added whole: absent at the base side
        above = bisect.bisect_left(numbers, shape.line)
        old = copy.copy(shape)
        old.name, old.line, old.end_line = shape.name.partition("#")[0], shape.line - above, shape.end_line - above
        add_shape(base, old)
    return base


class Remade:
    """One side of a file's shapes made again from its text, once, when a settled shape is asked
    for what it did not keep (`settle`): its normalised body, or its defaults when private."""

    def __init__(self, make: Callable[[], Shapes | None]) -> None:
        self._make: Callable[[], Shapes | None] | None = make
        self._shapes: Shapes | None = None

    def shape(self, name: str) -> FunctionShape:
        if self._make is not None:
            self._shapes, self._make = self._make(), None
        assert self._shapes is not None and name in self._shapes, f"{name} not found again in the same text"
        return self._shapes[name]


def settle(shapes: Shapes, remade: Remade) -> Shapes:
    """`shapes` without their syntax tree, so a change's shapes can be held until the whole change
    is compared (a tree holds an object per token): the counts (every comparison reads them), a
    public function's defaults and whether it is trivial are computed now; a normalised body, which
    only a fix or a function that may have moved asks for, is made from the text again (`remade`)."""
    for name, shape in shapes.items():
        shape.__dict__["_counted"] = shape._counts()
        if shape.public:
            shape.__dict__["defaults"] = shape._defaults()
            shape.__dict__["trivial"] = shape.trivial
        # Nothing left refers to the tree: what was not computed now is asked of the text again.
        shape._counts = _settled_counts
        shape._defaults = functools.partial(_defaults_of, remade, name)
        shape._trivial = shape._trivial if isinstance(shape._trivial, bool) else functools.partial(_trivial_of, remade, name)
        shape._body = functools.partial(_body_of, remade, name)
    return shapes


def _settled_counts() -> tuple[int, int]:
    raise AssertionError("a settled shape's counts are computed when it is settled")


def _body_of(remade: Remade, name: str) -> str:
    return remade.shape(name).body


def _defaults_of(remade: Remade, name: str) -> tuple[tuple[str, str], ...]:
    return remade.shape(name).defaults


def _trivial_of(remade: Remade, name: str) -> bool:
    return remade.shape(name).trivial



# What a settled shape (`settle`) computed already, kept when it is packed.
_COMPUTED = ("_counted", "defaults", "trivial", "body")


class PackedFunction(NamedTuple):
    name: str
    line: int
    end_line: int
    text: str
    public: bool
    trivial: bool | None  # None: asked of the text again when wanted
    computed: dict[str, object]  # of _COMPUTED, what was computed


class PackedShapes(NamedTuple):
    """Settled shapes as plain values (`packed`), to send from the worker process that made them
    to the one that compares them: a settled shape remakes itself from the review's request,
    which does not cross a pipe."""

    head_shapes: bool  # HeadShapes
    functions: tuple[PackedFunction, ...]


def packed(shapes: Shapes) -> PackedShapes:
    return PackedShapes(
        isinstance(shapes, HeadShapes),
        tuple(
            PackedFunction(
                name, shape.line, shape.end_line, shape.text, shape.public,
                shape._trivial if isinstance(shape._trivial, bool) else None,
                {key: shape.__dict__[key] for key in _COMPUTED if key in shape.__dict__},
            )
            for name, shape in shapes.items()
        ),
    )


def unpacked(shapes: PackedShapes, remade: Remade) -> Shapes:
    """The settled shapes `packed` took apart, what they had not computed asked of `remade`."""
    made: Shapes = HeadShapes() if shapes.head_shapes else {}
    for function in shapes.functions:
        name = function.name
        shape = FunctionShape(
            name=name, line=function.line, end_line=function.end_line, text=function.text, public=function.public,
            counts=_settled_counts,
            body=functools.partial(_body_of, remade, name),
            defaults=functools.partial(_defaults_of, remade, name),
            trivial=function.trivial if function.trivial is not None else functools.partial(_trivial_of, remade, name),
        )
        shape.__dict__.update(function.computed)
        made[name] = shape
    return made
