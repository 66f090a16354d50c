"""python_walk.Walk's grouping compiled (_walk.c) against its Python path: the same nodes, in the same
order, grouped under the same classes, on real modules; and on trees ast.parse never makes, either
the same or left to the Python path (None), never another answer."""

from __future__ import annotations

import ast
import random
import sys
import sysconfig
from pathlib import Path

import pytest

from reviewgate.reviewers.builtin import python_walk as walk_module

compiled = pytest.importorskip("reviewgate.reviewers.builtin._walk")

Grouped = dict[type[ast.AST], tuple[ast.AST, ...]]


def python_walk(tree: ast.AST, monkeypatch: pytest.MonkeyPatch) -> Grouped:
    with monkeypatch.context() as patched:
        patched.setattr(walk_module, "compiled_walk", lambda: None)
        return walk_module.Walk(tree)._grouped


def compiled_walk(tree: ast.AST) -> Grouped | None:
    return compiled.grouped_nodes(tree, walk_module.compiled_walk_plans())


def assert_same(left: Grouped, right: Grouped) -> None:
    assert list(left) == list(right)  # the classes in the order first met
    for kind, nodes in left.items():
        assert len(nodes) == len(right[kind]) and all(a is b for a, b in zip(nodes, right[kind], strict=True)), kind


def test_the_compiled_walk_is_the_one_used() -> None:
    assert walk_module.compiled_walk() is compiled.grouped_nodes
    assert ast.Name in walk_module.compiled_walk_plans() and ast.Num not in walk_module.compiled_walk_plans()  # `Num.n`: a property


def test_the_same_groups_as_the_python_path_on_the_standard_library(monkeypatch: pytest.MonkeyPatch) -> None:
    library = Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(library.glob("*.py"))[:150]  # every statement and expression kind, a few times over
    assert len(modules) >= 100
    nodes = 0
    for module in modules:
        try:
            tree = ast.parse(module.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        expected = python_walk(tree, monkeypatch)
        grouped = compiled_walk(tree)
        assert grouped is not None, module.name
        assert_same(grouped, expected)
        nodes += sum(map(len, expected.values()))
    assert nodes > 200_000


def test_unset_fields_and_holes_are_read_as_the_python_path_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trees of the `ast` module's classes that ast.parse never makes: a field never set, a list
    with holes, a list field holding a falsy value, a constant's value a node."""
    tree = ast.Module(
        body=[
            ast.Return(),  # `value` never set
            ast.Expr(value=ast.Dict(keys=[None, ast.Name(id="a")], values=[ast.Name(id="b"), ast.Name(id="c")])),
            ast.Expr(value=ast.Call(func=ast.Name(id="f"), args=[], keywords=[])),
            ast.Expr(value=ast.Constant(value=ast.Name(id="inside a constant"))),
        ],
        type_ignores=[],
    )
    grouped = compiled_walk(tree)
    assert grouped is not None
    assert_same(grouped, python_walk(tree, monkeypatch))
    assert [node.id for node in grouped[ast.Name]] == ["a", "b", "c", "f"]  # a constant's value is not a field it walks


class Marked(ast.Name):
    _fields = ("id", "ctx", "extra")


class Shadowed(ast.Expr):
    @property
    def value(self) -> ast.AST:
        return FROM_THE_PROPERTY

    @value.setter
    def value(self, value: ast.AST) -> None:
        self.__dict__["value"] = value  # what the property hides


class Looked(ast.Expr):
    def __getattribute__(self, name: str) -> object:
        return FROM_THE_PROPERTY if name == "value" else super().__getattribute__(name)


FROM_THE_PROPERTY = ast.Constant(value="from the property")


def odd_trees() -> list[ast.Module]:
    """Trees the compiled walk leaves to the Python path, one oddity each."""
    def module(*statements: ast.stmt) -> ast.Module:
        return ast.Module(body=[ast.Pass(), *statements], type_ignores=[])

    return [
        module(ast.Expr(value=Marked(id="x", extra=[1, ast.Name(id="inside"), "s", None]))),  # a class of its own
        module(Shadowed(value=ast.Constant(value="hidden"))),  # a property over a field
        module(Looked(value=ast.Constant(value="hidden too"))),  # its own attribute lookup
        ast.Module(body=(ast.Pass(), ast.Pass()), type_ignores=[]),  # a tuple where a list is read
        ast.Module(body=0, type_ignores=[]),  # a falsy value where a list is read
        module(ast.Expr(value=ast.Dict(keys=[0, ast.Name(id="k")], values=[ast.Name(id="v"), ast.Name(id="w")]))),
    ]


def test_trees_ast_parse_never_makes_are_the_python_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    for tree in odd_trees():
        assert compiled_walk(tree) is None, ast.dump(tree)[:200]
        try:
            expected: Grouped | type[Exception] = python_walk(tree, monkeypatch)
        except (AttributeError, TypeError) as error:  # a value the Python path cannot walk either
            expected = type(error)
        if isinstance(expected, dict):
            assert_same(walk_module.Walk(tree)._grouped, expected)
        else:
            with pytest.raises(expected):
                walk_module.Walk(tree)
    shadowed = odd_trees()[1]
    assert FROM_THE_PROPERTY in walk_module.Walk(shadowed)._grouped[ast.Constant]


def test_a_plan_of_another_shape_leaves_the_tree_to_the_python_path() -> None:
    tree = ast.parse("x = 1\n")
    plans = dict(walk_module.compiled_walk_plans())
    for bad in ([("body", 1)], (("body",),), (("body", 7),), ((b"body", 1),), None):
        plans[ast.Module] = bad  # type: ignore[assignment]
        assert compiled.grouped_nodes(tree, plans) is None, bad
    with pytest.raises(TypeError):
        compiled.grouped_nodes(tree, [])  # type: ignore[arg-type]


def test_random_hand_built_trees_walk_as_the_python_path_walks_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes of the `ast` module's classes with fields left unset or holding None, lists with
    holes, falsy and plain values, tuples, and nodes of classes of their own."""
    generator = random.Random(5)
    kinds = [ast.Name, ast.Call, ast.BinOp, ast.List, ast.Dict, ast.Expr, ast.If, ast.Return, ast.Constant, Marked]
    values: list[object] = [None, 0, "", "s", 1, (), Ellipsis]

    def node(depth: int) -> ast.AST:
        kind = generator.choice(kinds)
        made = kind()
        for name in kind._fields:
            roll = generator.random()
            if roll < 0.2:
                continue  # unset
            if roll < 0.5 and depth < 4:
                setattr(made, name, [generator.choice([None, node(depth + 1), node(depth + 1)])
                                     for _ in range(generator.randint(0, 3))])
            elif roll < 0.8 and depth < 4:
                setattr(made, name, node(depth + 1))
            else:
                setattr(made, name, generator.choice([*values, [], (node(depth + 1),) if depth < 4 else ()]))
        return made

    answered = 0
    for _ in range(3_000):
        tree = ast.Module(body=[node(0) for _ in range(generator.randint(1, 3))], type_ignores=[])
        grouped = compiled_walk(tree)
        try:
            expected = python_walk(tree, monkeypatch)
        except (AttributeError, TypeError):
            assert grouped is None  # what the Python path cannot walk is never answered here
            continue
        if grouped is not None:
            assert_same(grouped, expected)
            answered += 1
    assert answered > 300


def test_deep_trees_are_walked_without_recursion() -> None:
    depth = sys.getrecursionlimit() * 4
    tree: ast.expr = ast.Name(id="leaf")
    for _ in range(depth):
        tree = ast.UnaryOp(op=ast.Not(), operand=tree)
    grouped = compiled_walk(ast.Expression(body=tree))
    assert grouped is not None
    assert len(grouped[ast.UnaryOp]) == depth and len(grouped[ast.Name]) == 1
