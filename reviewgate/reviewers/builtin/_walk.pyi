# common.Walk's grouping compiled (_walk.c); common.Walk says what it returns.
import ast
from collections.abc import Callable

def grouped_nodes(
    tree: ast.AST,
    plans: dict[type[ast.AST], tuple[tuple[str, int], ...]],
    plan_of: Callable[[type[ast.AST]], tuple[tuple[str, int], ...]],
    node_type: type[ast.AST],
    /,
) -> dict[type[ast.AST], tuple[ast.AST, ...]]: ...
