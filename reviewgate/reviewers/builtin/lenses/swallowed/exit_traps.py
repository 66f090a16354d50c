"""A shell script's clean-up on exit (`trap '...' EXIT` and the functions it runs), where
`|| true` ignores nothing that matters."""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

# `trap 'rm -rf "$tmp" || true' EXIT` / `trap cleanup EXIT INT`: the command and the signals.
_TRAP = LazyPattern(r"""^\s*trap\s+(?P<command>'[^']*'|"[^"]*"|[\w-]+)\s+(?P<signals>[\w\s]+?)\s*(?:[;#].*)?$""")
_SHELL_FUNCTION = LazyPattern(r"^(?P<indent>\s*)(?:function\s+)?(?P<name>[\w-]+)\s*(?:\(\s*\))?\s*\{\s*$"
                             r"|^(?P<indent2>\s*)(?P<name2>[\w-]+)\s*\(\s*\)\s*$")


def exit_trap_lines(text: str) -> set[int]:
    """Lines of a script's clean-up on exit: `trap '...' EXIT` lines, and the bodies of functions
    an EXIT trap runs. A clean-up step that may fail (`rm ... || true`) must not turn the
    script's own exit status into its failure: `|| true` there ignores nothing that matters."""
    lines = text.split("\n")
    found: set[int] = set()
    handlers: set[str] = set()
    for number, line in enumerate(lines, 1):
        match = _TRAP.match(line)
        if match and {"EXIT", "0"} & set(match.group("signals").split()):
            found.add(number)
            handlers.update(re.findall(r"[\w-]+", match.group("command").strip("'\"")))
    if not handlers:
        return found
    for number, line in enumerate(lines, 1):
        match = _SHELL_FUNCTION.match(line)
        name = match and (match.group("name") or match.group("name2"))
        if not match or name not in handlers:
            continue
        indent = match.group("indent") if match.group("name") else match.group("indent2")
        for index in range(number, len(lines)):
            found.add(index + 1)
            if lines[index].rstrip() == f"{indent}}}":
                break
    return found
