# python_walk.Walk's grouping compiled (_walk.c); python_walk.Walk says what it returns.
import ast

def grouped_nodes(
    tree: ast.AST, known: dict[type[ast.AST], tuple[tuple[str, int], ...]], /
) -> dict[type[ast.AST], tuple[ast.AST, ...]] | None: ...
