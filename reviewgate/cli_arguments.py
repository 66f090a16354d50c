"""The command line's grammar: every command and its flags, and the one-line errors that name
what was mistyped (with a guess at what was meant)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from reviewgate import __version__
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.text import did_you_mean


class BadArguments(Exception):
    """A flag argparse refused: printed by `main` as one line, in the words of whoever called it
    (flags on the command line, inputs in the action)."""

    def __init__(self, message: str, prog: str) -> None:
        super().__init__(message)
        self.prog = prog


class _ArgumentParser(argparse.ArgumentParser):
    """argparse's own errors, raised rather than printed, so `main` says them in one line."""

    def error(self, message: str) -> NoReturn:
        raise BadArguments(message, self.prog)


# A flag as argparse and our messages name it: `argument --max-rounds`, `--base`, `(from --base)`.
_FLAG = LazyPattern(r"(?:argument )?(--[a-z][a-z-]*)(?:/-[a-z])?")


def name_options(message: str, names: Mapping[str, str]) -> str:
    """`message` with each flag in `names` replaced by what the user typed instead (the action's
    `input max-rounds` for `--max-rounds`); other flags are left as they are."""
    if not names:
        return message
    return _FLAG.sub(lambda match: names.get(match.group(1), match.group(0)), message)


def _add_target_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", type=Path, default=Path("."), help="repository to review (default: current directory)")
    parser.add_argument("--base", help="base ref to diff against (default: the CI event's base, else the repository's default "
                        "branch: origin/HEAD's, else the first of origin/main, origin/master, main, master "
                        "that exists, else the one origin names)")
    parser.add_argument("--head", help="head ref to review (default: the head CI names, e.g. the pull request's, else HEAD)")
    parser.add_argument("--config", type=Path, help="config file (default: .reviewgate.toml or [tool.reviewgate] in pyproject.toml)")
    parser.add_argument("--bundle", type=Path, nargs="+", action="extend", metavar="FILE",
                        help="review these documents (plan, spec, docs) instead of a diff; repeatable")
    parser.add_argument("--include-dirty", action="store_true",
                        help="also review uncommitted changes in the working tree (local runs)")


if TYPE_CHECKING:
    # What add_subparsers returns: argparse names its type only privately.
    _Commands = argparse._SubParsersAction[_ArgumentParser]  # noqa: SLF001


def _add_run(commands: _Commands) -> None:
    run = commands.add_parser(
        "run", help="review the checked-out branch: freeze, verify, review, publish",
        description="Review the checked-out branch against its base and say what to do next. Exit 0 approved, "
                    "1 changes requested, 2 usage or config error, 3 not reviewed (the review could not be done: "
                    "not a judgement of the code).")
    _add_target_flags(run)
    run.add_argument("--output-dir", type=Path, default=Path(".reviewgate"), help="where outputs go (default: .reviewgate/; relative to the repository root)")
    run.add_argument("--reviewer", action="append", dest="reviewers", metavar="NAME",
                     help="reviewer to run (repeatable; overrides review.reviewers; 'builtin' needs no key)")
    run.add_argument("--fail-on", action="append", metavar="CLASS:SEVERITY",
                     help="class and lowest severity that blocks (repeatable; overrides review.fail_on)")
    run.add_argument("--max-rounds", type=int, help="review rounds before a person must look (overrides review.max_rounds)")
    run.add_argument("--no-verify", action="store_true", help="skip the verify even when a manifest exists")
    run.add_argument("--progress", action="store_true", default=None,
                     help="report the stage, files done and time on stderr even when it is not a terminal "
                     "(default: only on a terminal; REVIEWGATE_PROGRESS=1 or 0 says the same); in GitHub Actions "
                     "and GitLab CI as collapsible log groups")
    run.add_argument("--allow-verify-without-isolation", action="store_true", help=_ALLOW_HELP)
    run.add_argument("--cache-dir", help="where model reviews and the DRY index are stored and reused (overrides "
                     "[cache] dir; default .reviewgate-cache/; relative to the repository root)")
    run.add_argument("--on-missing-key", choices=("blocked", "skip"),
                     help="a model reviewer whose key variable is unset (fork PRs): block (default) or skip it")
    run.add_argument("--import-sarif", action="append", type=Path, default=[], metavar="FILE",
                     help="import another analyzer's SARIF 2.1.0 results as findings (repeatable)")
    run.add_argument("--sarif-filter", metavar="MODE",
                     help="which imported results count: added (default) | diff_context | file | nofilter")
    run.add_argument("--shard", metavar="I/N",
                     help="review only the I-th of N parts of the change (1-based, e.g. 2/4) and write a shard "
                     "report for `reviewgate merge`; publishes nothing, exits 0 unless the shard could not run")
    run.add_argument("--pre-push", action="store_true",
                     help="as a pre-push hook: review each pushed ref against the remote branch it updates (the "
                     "default branch for a new one), from pre-commit's PRE_COMMIT_* variables or git's lines on "
                     "stdin; never runs the verify")


def _add_merge(commands: _Commands) -> None:
    merge = commands.add_parser(
        "merge", help="combine shard reports (run --shard) into one verdict and publish it; exit codes as run")
    merge.add_argument("reports", nargs="+", type=Path, metavar="DIR",
                       help="shard report files, or directories searched for shard-*-of-*.json")
    merge.add_argument("--repo", type=Path, default=Path("."), help="the checkout of the reviewed change "
                       "(default: current directory)")
    merge.add_argument("--base", help="base ref, as given to the shards (default: as for run)")
    merge.add_argument("--head", help="head ref, as given to the shards (default: as for run)")
    merge.add_argument("--config", type=Path, help="config file, as given to the shards")
    merge.add_argument("--output-dir", type=Path, default=Path(".reviewgate"),
                       help="where outputs go (default: .reviewgate/)")
    merge.add_argument("--reviewer", action="append", dest="reviewers", metavar="NAME",
                       help="reviewers, as given to the shards (repeatable; overrides review.reviewers)")
    merge.add_argument("--fail-on", action="append", metavar="CLASS:SEVERITY",
                       help="class and lowest severity that blocks (repeatable; overrides review.fail_on)")
    merge.add_argument("--max-rounds", type=int, help="review rounds before a person must look")


_ALLOW_HELP = ("run the verify even where it runs as this same user without namespaces while the job holds "
               "credentials (a token, a model key), which the branch's code can then read")


def _add_verify(commands: _Commands) -> None:
    verify = commands.add_parser(
        "verify", help="only the verify from .prepcook/scripts.toml; same outputs and exit codes"
    )
    verify.add_argument("--repo", type=Path, default=Path("."),
                        help="repository to verify (default: current directory)")
    verify.add_argument("--config", type=Path,
                        help="config file (default: .reviewgate.toml or [tool.reviewgate] in pyproject.toml)")
    verify.add_argument("--output-dir", type=Path, default=Path(".reviewgate"),
                        help="where outputs go (default: .reviewgate/; relative to the repository root)")
    verify.add_argument("--base", help="grant secrets from the manifest at the merge base with this ref "
                        "(default: the working-tree manifest)")
    verify.add_argument("--allow-verify-without-isolation", action="store_true", help=_ALLOW_HELP)


def _add_freeze(commands: _Commands) -> None:
    freeze = commands.add_parser("freeze", help="print the frozen target as JSON")
    _add_target_flags(freeze)


def _add_doctor(commands: _Commands) -> None:
    doctor = commands.add_parser("doctor", help="check config, git, base and every reviewer; exit 0 ok, 2 config, 3 unreachable")
    _add_target_flags(doctor)
    doctor.add_argument("--reviewer", action="append", dest="reviewers", metavar="NAME",
                        help="reviewer to check (repeatable; overrides review.reviewers)")


_COMMAND_PARSERS: dict[str, Callable[[_Commands], None]] = {
    "run": _add_run,
    "merge": _add_merge,
    "verify": _add_verify,
    "freeze": _add_freeze,
    "doctor": _add_doctor,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command, or only `command` when the arguments name one: argparse takes a millisecond
    or so to build each command's parser, and a run needs only its own. Help, a bare or a
    mistyped command get them all."""
    parser = _ArgumentParser(prog="reviewgate", description="An independent review gate for CI.",
                             epilog="Start with `reviewgate run` in a checkout of your branch; "
                                    "`reviewgate COMMAND --help` lists a command's flags.")
    parser.add_argument("--version", action="version", version=f"reviewgate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)
    for name, add in _COMMAND_PARSERS.items():
        if command is None or name == command:
            add(commands)
    return parser


def command_parser(parser: argparse.ArgumentParser, given: Sequence[str]) -> argparse.ArgumentParser | None:
    """The parser of the command the arguments name (`run` in `run --bse x`), if any."""
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subcommands only here
        choices = action.choices if isinstance(action.choices, dict) else {}
        for item in given:
            if item in choices:
                command = choices[item]
                return command if isinstance(command, argparse.ArgumentParser) else None
    return None


def flag_guess(message: str, command: argparse.ArgumentParser | None) -> str:
    """`; did you mean '--base'?` for the first unknown flag that looks like a typo of one the
    command has (argparse says only "unrecognized arguments")."""
    if command is None or not message.startswith("unrecognized arguments: "):
        return ""
    flags = [name for name in command._option_string_actions if name.startswith("--")]  # noqa: SLF001
    for token in message.removeprefix("unrecognized arguments: ").split():
        if token.startswith("--"):
            guess = did_you_mean(token.partition("=")[0], flags)
            if guess:
                return guess
    return ""


# argparse's words for a value outside a flag's or the command's choices (Python 3.11 to 3.13).
_INVALID_CHOICE = LazyPattern(r"invalid choice: '(?P<typed>.*)' \(choose from (?P<choices>.*)\)$")


def choice_guess(message: str) -> str:
    """`; did you mean 'run'?` for a command or a flag's value that looks like a typo of a choice."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return ""
    choices = [choice.strip().strip("'") for choice in found.group("choices").split(",")]
    return did_you_mean(found.group("typed"), choices)
