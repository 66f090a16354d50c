"""common.Walk's grouping compiled (_walk.c) against its Python path: the same nodes, in the same
order, grouped under the same classes, on real modules and on trees ast.parse never makes."""

from __future__ import annotations

import ast
import sys
import sysconfig
from pathlib import Path

import pytest

from reviewgate.reviewers.builtin import common

compiled = pytest.importorskip("reviewgate.reviewers.builtin._walk")


def python_walk(tree: ast.AST, monkeypatch: pytest.MonkeyPatch) -> dict[type[ast.AST], tuple[ast.AST, ...]]:
    with monkeypatch.context() as patched:
        patched.setattr(common, "compiled_walk", lambda: None)
        return common.Walk(tree)._grouped


def compiled_walk(tree: ast.AST) -> dict[type[ast.AST], tuple[ast.AST, ...]]:
    return compiled.grouped_nodes(tree, common._walk_plans, common._walk_plan, ast.AST)


def assert_same(left: dict[type[ast.AST], tuple[ast.AST, ...]], right: dict[type[ast.AST], tuple[ast.AST, ...]]) -> None:
    assert list(left) == list(right)  # the classes in the order first met
    for kind, nodes in left.items():
        assert len(nodes) == len(right[kind]) and all(a is b for a, b in zip(nodes, right[kind], strict=True)), kind


def test_the_compiled_walk_is_the_one_used() -> None:
    assert common.compiled_walk() is compiled.grouped_nodes


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
        assert_same(compiled_walk(tree), expected)
        nodes += sum(map(len, expected.values()))
    assert nodes > 200_000


def test_trees_ast_parse_never_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A field left unset (read as None), a list field holding None or holding a tuple, a field of
    unknown type holding nodes and other values, a subclass of a node class, and a node's field
    whose class defines it as a property: the compiled walk reads each as the Python path does."""

    class Marked(ast.Name):
        _fields = ("id", "ctx", "extra")

    from_the_property = ast.Constant(value="from the property")

    class Shadowed(ast.Expr):
        @property
        def value(self) -> ast.AST:
            return from_the_property

        @value.setter
        def value(self, value: ast.AST) -> None:
            self.__dict__["value"] = value  # what the property hides

    class Looked(ast.Expr):
        def __getattribute__(self, name: str) -> object:
            return from_the_property if name == "value" else super().__getattribute__(name)

    missing = ast.Return()  # `value` never set
    holes = ast.Dict(keys=[None, ast.Name(id="a")], values=(ast.Name(id="b"), ast.Name(id="c")))
    unknown = Marked(id="x", extra=[1, ast.Name(id="inside"), "s", None])
    lone = Marked(id="y", extra=ast.Constant(value=2))
    odd = ast.Module(
        body=[missing, ast.Expr(value=holes), ast.Expr(value=unknown), ast.Expr(value=lone),
              Shadowed(value=ast.Constant(value="hidden")), Looked(value=ast.Constant(value="hidden too"))],
        type_ignores=[],
    )
    grouped = compiled_walk(odd)
    assert_same(grouped, python_walk(odd, monkeypatch))
    names = [node.id for node in grouped[ast.Name]]
    assert names == ["a", "b", "c", "inside"]
    assert [node.value for node in grouped[ast.Constant]] == ["from the property", "from the property", 2]  # breadth first


def test_a_bad_plan_is_refused_not_read() -> None:
    tree = ast.parse("x = 1\n")
    with pytest.raises(TypeError):
        compiled.grouped_nodes(tree, {}, lambda kind: [("body", 1)], ast.AST)  # a list, not a tuple
    with pytest.raises(TypeError):
        compiled.grouped_nodes(tree, {ast.Module: (("body",),)}, common._walk_plan, ast.AST)
    with pytest.raises(ZeroDivisionError):
        compiled.grouped_nodes(tree, {}, lambda kind: 1 / 0, ast.AST)


def test_deep_trees_are_walked_without_recursion() -> None:
    depth = sys.getrecursionlimit() * 4
    tree: ast.expr = ast.Name(id="leaf")
    for _ in range(depth):
        tree = ast.UnaryOp(op=ast.Not(), operand=tree)
    grouped = compiled_walk(ast.Expression(body=tree))
    assert len(grouped[ast.UnaryOp]) == depth and len(grouped[ast.Name]) == 1


def test_a_node_whose_truth_empties_its_list_is_walked_as_the_python_path_walks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Testing a node's truth may run Python code; here it empties the list being read. Neither
    path reads past it, and both keep the node they were testing."""

    class Emptying(ast.Pass):
        def __bool__(self) -> bool:
            holder.body.clear()
            return True

    def tree() -> ast.Module:
        module = ast.Module(body=[], type_ignores=[])
        module.body += [Emptying(), ast.Pass(), ast.Pass()]
        return module

    holder = tree()
    grouped = compiled_walk(holder)
    assert list(grouped) == [ast.Module, Emptying]
    holder = tree()
    assert list(python_walk(holder, monkeypatch)) == [ast.Module, Emptying]
