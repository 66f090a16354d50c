"""The languages the lenses know, by file extension or whole name, and their comment families."""

from __future__ import annotations

import enum
import functools


class Language(str, enum.Enum):
    PYTHON = "python"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    GO = "go"
    JAVA = "java"
    CSHARP = "csharp"
    KOTLIN = "kotlin"
    RUST = "rust"
    RUBY = "ruby"
    PHP = "php"
    SHELL = "shell"
    CONFIG = "config"  # YAML, TOML, INI, Perl, R, Dockerfile, Makefile: `#` comments
    C_FAMILY = "c-family"  # C, C++, Swift, Scala, Dart, Groovy: `//` comments
    SQL = "sql"  # `--` comments
    OTHER = "other"


EXTENSIONS: dict[str, Language] = {
    ".py": Language.PYTHON,
    ".pyi": Language.PYTHON,
    ".js": Language.JAVASCRIPT,
    ".jsx": Language.JAVASCRIPT,
    ".mjs": Language.JAVASCRIPT,
    ".cjs": Language.JAVASCRIPT,
    ".ts": Language.TYPESCRIPT,
    ".tsx": Language.TYPESCRIPT,
    ".mts": Language.TYPESCRIPT,
    ".cts": Language.TYPESCRIPT,
    ".go": Language.GO,
    ".java": Language.JAVA,
    ".cs": Language.CSHARP,
    ".kt": Language.KOTLIN,
    ".kts": Language.KOTLIN,
    ".rs": Language.RUST,
    ".rb": Language.RUBY,
    ".php": Language.PHP,
    ".sh": Language.SHELL,
    ".bash": Language.SHELL,
    **dict.fromkeys(
        (".yml", ".yaml", ".toml", ".ini", ".cfg", ".conf", ".pl", ".r", ".mk"), Language.CONFIG
    ),
    **dict.fromkeys(
        (".c", ".h", ".cc", ".cpp", ".hpp", ".swift", ".scala", ".dart", ".groovy", ".gradle"),
        Language.C_FAMILY,
    ),
    ".sql": Language.SQL,
}


# Files known by their whole name rather than an extension.
NAMES: dict[str, Language] = {
    **dict.fromkeys(
        ("Dockerfile", "Makefile", "justfile", "Gemfile", "Rakefile", ".gitignore", ".dockerignore"),
        Language.CONFIG,
    ),
    "Jenkinsfile": Language.C_FAMILY,
}


CODE_LANGUAGES = frozenset(
    {
        Language.PYTHON,
        Language.JAVASCRIPT,
        Language.TYPESCRIPT,
        Language.GO,
        Language.JAVA,
        Language.CSHARP,
        Language.KOTLIN,
    }
)


C_LIKE = frozenset(
    {Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO, Language.JAVA, Language.CSHARP, Language.KOTLIN}
)


# Languages the tests lens reads functions of (behaviour.py): the code languages, and Rust, Ruby
# and PHP, which the other lenses read as text by their comment syntax only.
BEHAVIOUR_LANGUAGES = CODE_LANGUAGES | {Language.RUST, Language.RUBY, Language.PHP}


HASH_COMMENT = frozenset({Language.PYTHON, Language.SHELL, Language.CONFIG, Language.RUBY})


SLASH_COMMENT = C_LIKE | {Language.C_FAMILY, Language.RUST, Language.PHP}


# Every lens asks these of every changed file, and the DRY index of every file in the tree: each
# answer computed once (a path object each time was a few percent of a large review).
@functools.lru_cache(maxsize=8192)
def language_of(path: str) -> Language:
    # String operations, not PurePosixPath (the DRY lens asks this of every file in the tree):
    # the suffix as PurePosixPath gives it, from the last dot that neither starts nor ends the name.
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""
    return NAMES.get(name) or EXTENSIONS.get(suffix.lower(), Language.OTHER)
