"""A repository's own review rules for some of its paths: `[[review.instructions]]`.

```toml
[[review.instructions]]
paths = ["api/**"]            # gitignore-style, as review.exclude
text = "Handlers in api/ must validate input with the schema module."
```

Read with the rest of the policy at the merge base (policy/source.py): a branch cannot add
rules for itself. Model reviewers get the rules whose paths cover a chunk's files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from reviewgate.errors import ConfigError

if TYPE_CHECKING:
    import pathspec  # gitignore-style patterns: imported only when some are configured

KEY = "instructions"


@dataclass(frozen=True)
class PathInstruction:
    """A repository's instruction for the paths it names, as `[[review.instructions]]` gives it."""

    paths: tuple[str, ...]
    text: str

    @cached_property
    def _spec(self) -> pathspec.GitIgnoreSpec:
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(self.paths)

    def covers(self, path: str) -> bool:
        return self._spec.match_file(path)


def parse_instructions(value: Any, where: str) -> tuple[PathInstruction, ...]:
    """`where` names the table (`FILE: review.`); every problem is one line naming the key."""
    key = f"{where}{KEY}"
    if not isinstance(value, list):
        raise ConfigError(f"{key}: expected an array of tables ([[review.instructions]]), got {value!r}")
    parsed: list[PathInstruction] = []
    for index, item in enumerate(value):
        entry = f"{key}[{index}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{entry}: expected a table with `paths` and `text`, got {item!r}")
        unknown = sorted(set(item) - {"paths", "text"})
        if unknown:
            raise ConfigError(f"{entry}.{unknown[0]}: unknown key (an instruction has `paths` and `text`)")
        paths = item.get("paths")
        if paths is None:
            raise ConfigError(f"{entry}.paths: missing (the gitignore-style patterns the text applies to)")
        if isinstance(paths, str):
            paths = [paths]
        if (not isinstance(paths, list) or not paths
                or not all(isinstance(pattern, str) and pattern.strip() for pattern in paths)):
            raise ConfigError(f"{entry}.paths: expected a non-empty list of patterns, got {paths!r}")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{entry}.text: expected a non-empty string, got {text!r}")
        parsed.append(PathInstruction(tuple(paths), text.strip()))
    return tuple(parsed)


def instructions_for(instructions: Iterable[PathInstruction], paths: Iterable[str]) -> tuple[PathInstruction, ...]:
    """The instructions that cover at least one of `paths`, in configured order."""
    wanted = list(paths)
    return tuple(item for item in instructions if any(item.covers(path) for path in wanted))
