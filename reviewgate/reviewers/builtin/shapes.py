"""What one side of a file says about its functions, in every language the tests lens reads: the
shape the behaviour comparison (behaviour.py) holds the merge base and head against."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FunctionShape:
    """One function or method at one side of the change."""

    name: str  # qualified: `Class.method`, `Receiver.Method`, `outer.inner`
    line: int
    end_line: int
    # Normalised body: no positions, comments, docstrings, annotations or string texts, local
    # names numbered. Equal bodies mean the same behaviour (a move, a rename, a reformat).
    body: str
    branches: int  # if/elif/case/catch/loops/boolean operators/conditional expressions
    statements: int
    public: bool
    defaults: tuple[tuple[str, str], ...] = ()  # parameter name -> normalised default value


# Qualified name -> shape. Two functions of one name in one scope (an overload, a property
# setter) get `name#2`, `name#3` in order, so each side pairs them the same way.
Shapes = dict[str, FunctionShape]


def add_shape(shapes: Shapes, shape: FunctionShape) -> None:
    name = shape.name
    count = 1
    while name in shapes:
        count += 1
        name = f"{shape.name}#{count}"
    shapes[name] = shape if name == shape.name else FunctionShape(
        name, shape.line, shape.end_line, shape.body, shape.branches, shape.statements, shape.public, shape.defaults
    )
