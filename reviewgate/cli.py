"""Command line: parse flags into typed options at the edge; one place maps errors to exit codes."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from reviewgate import __version__, progress
from reviewgate.ci import detect, github_step_files
from reviewgate.config import Overrides
from reviewgate.errors import EXIT_BLOCKED, EXIT_USAGE, ReviewgateError, UsageError
from reviewgate.escaping import runner_line
from reviewgate.freeze.bundle import workspace_root
from reviewgate.freeze.freeze import describe
from reviewgate.freeze.git import GitFailure
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.run_options import RunOptions, freeze_target, load_policy, review_policy
from reviewgate.text import did_you_mean, printable


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


def _run(arguments: argparse.Namespace, stdout: TextIO) -> int:
    shard = None
    if arguments.shard is not None:
        from reviewgate.sharding.plan import parse_shard  # the shard modules: only with --shard

        shard = parse_shard(arguments.shard)
    if shard is not None and arguments.bundle:
        raise UsageError("--shard: a document bundle (--bundle) is reviewed in one run, not in shards")
    if shard is not None and arguments.include_dirty:
        raise UsageError("--shard: not with --include-dirty; the merge reviews commits, so shards review commits too")
    if arguments.pre_push:
        for flag, given in (("--base", arguments.base), ("--head", arguments.head), ("--bundle", arguments.bundle),
                            ("--include-dirty", arguments.include_dirty), ("--shard", shard)):
            if given:
                raise UsageError(f"--pre-push: not with {flag}; the push names what is reviewed")
    options = RunOptions(
        start=arguments.repo,
        base=arguments.base,
        head=arguments.head,
        config_path=arguments.config,
        output_dir=arguments.output_dir,
        bundle=tuple(arguments.bundle or ()),
        include_dirty=arguments.include_dirty,
        allow_verify_without_isolation=arguments.allow_verify_without_isolation,
        overrides=Overrides(
            reviewers=tuple(arguments.reviewers) if arguments.reviewers else None,
            fail_on=tuple(arguments.fail_on) if arguments.fail_on else None,
            max_rounds=arguments.max_rounds,
            no_verify=arguments.no_verify,
            cache_dir=arguments.cache_dir,
            on_missing_key=arguments.on_missing_key,
            import_sarif=tuple(arguments.import_sarif),
            sarif_filter=arguments.sarif_filter,
        ),
    )
    if shard is not None:
        from reviewgate.sharding.shard_run import run_shard  # the shard modules: only with --shard

        _start_progress(arguments.progress)
        return run_shard(options, shard, stdout)
    from reviewgate.run import run_gate  # the reviewers, forge clients and sinks: only for run

    _start_progress(arguments.progress)
    if arguments.pre_push:
        from reviewgate.pre_push import pushed_refs, run_pre_push

        return run_pre_push(options, pushed_refs(os.environ, sys.stdin), stdout, run_gate)
    return run_gate(options, stdout)


PROGRESS_VARIABLE = "REVIEWGATE_PROGRESS"
_PROGRESS_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False,
                   "off": False, "": None}


def _start_progress(flag: bool | None) -> None:
    """Progress on stderr when it is a terminal, or when the flag or the variable asks for it."""
    value = os.environ.get(PROGRESS_VARIABLE, "").strip().lower()
    if value not in _PROGRESS_WORDS:
        raise UsageError(f"{PROGRESS_VARIABLE}={value!r}: expected 1 or 0 (true or false)")
    asked = True if flag else _PROGRESS_WORDS[value]
    style = progress.style_for(asked, sys.stderr.isatty(), detect().provider)
    if style is not None:
        progress.start(sys.stderr, style)


def _merge(arguments: argparse.Namespace, stdout: TextIO) -> int:
    from reviewgate.sharding.merge import MergeOptions, run_merge

    overrides = Overrides(
        reviewers=tuple(arguments.reviewers) if arguments.reviewers else None,
        fail_on=tuple(arguments.fail_on) if arguments.fail_on else None,
        max_rounds=arguments.max_rounds,
    )
    options = RunOptions(start=arguments.repo, base=arguments.base, head=arguments.head,
                         config_path=arguments.config, output_dir=arguments.output_dir, overrides=overrides)
    return run_merge(MergeOptions(tuple(arguments.reports), options), stdout)


def _verify(arguments: argparse.Namespace, stdout: TextIO) -> int:
    options = RunOptions(start=arguments.repo, base=arguments.base, config_path=arguments.config,
                         output_dir=arguments.output_dir,
                         allow_verify_without_isolation=arguments.allow_verify_without_isolation)
    from reviewgate.run import run_verify_only

    return run_verify_only(options, stdout)


def _freeze(arguments: argparse.Namespace, stdout: TextIO) -> int:
    options = RunOptions(start=arguments.repo, base=arguments.base, head=arguments.head, config_path=arguments.config,
                         bundle=tuple(arguments.bundle or ()), include_dirty=arguments.include_dirty)
    repo = workspace_root(options.start, bool(options.bundle))
    policy = load_policy(repo, options, detect())
    target = freeze_target(repo, policy, options)
    policy_review = review_policy(policy)
    for line in (*describe(target), policy.origin.describe(), *policy_review.notes):
        sys.stderr.write(f"reviewgate: {runner_line(line)}\n")
    document = {
        **target.identity(),
        "policy": policy_review.to_json(),
        "files": [
            {"path": printable(item.path), "status": item.status.value, "old_path": item.old_path and printable(item.old_path),
             "binary": item.is_binary, "added_lines": item.stats.added_lines}
            for item in target.files
        ],
        "excluded": [{"path": printable(item.path), "reason": item.reason} for item in target.excluded],
    }
    stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return 0


def _doctor(arguments: argparse.Namespace, stdout: TextIO) -> int:
    from reviewgate.doctor import DoctorOptions, run_doctor

    reviewers = tuple(arguments.reviewers) if arguments.reviewers else None
    return run_doctor(DoctorOptions(start=arguments.repo, base=arguments.base, config_path=arguments.config,
                                    reviewers=reviewers), stdout)


# The commands whose verdict sets GitHub's step outputs (`stopped` sets them when they fail early).
PUBLISHING_COMMANDS = ("run", "merge", "verify")
COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "run": _run,
    "merge": _merge,
    "verify": _verify,
    "freeze": _freeze,
    "doctor": _doctor,
}


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    # Config keys, file names and git's messages are the branch's text: one line each, never a
    # workflow command (the runner parses stderr as well as stdout).
    sys.stderr.write(f"reviewgate: warning: {runner_line(str(message))}\n")


def _command_parser(parser: argparse.ArgumentParser, given: Sequence[str]) -> argparse.ArgumentParser | None:
    """The parser of the command the arguments name (`run` in `run --bse x`), if any."""
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subcommands only here
        choices = action.choices if isinstance(action.choices, dict) else {}
        for item in given:
            if item in choices:
                command = choices[item]
                return command if isinstance(command, argparse.ArgumentParser) else None
    return None


def _flag_guess(message: str, command: argparse.ArgumentParser | None) -> str:
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


def _choice_guess(message: str) -> str:
    """`; did you mean 'run'?` for a command or a flag's value that looks like a typo of a choice."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return ""
    choices = [choice.strip().strip("'") for choice in found.group("choices").split(",")]
    return did_you_mean(found.group("typed"), choices)


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None,
         option_names: Mapping[str, str] | None = None) -> int:
    """`option_names` maps flags to the words the caller's user typed instead (entrypoint.py:
    `--max-rounds` -> `input max-rounds`), for every error message."""
    out = stdout or sys.stdout
    names = option_names or {}
    given = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(given[0] if given and given[0] in COMMANDS else None)
    if not given:  # bare `reviewgate`: what it can do, and a usage exit
        sys.stderr.write(parser.format_help())
        return EXIT_USAGE
    try:
        arguments = parser.parse_args(given)
    except BadArguments as error:
        command = _command_parser(parser, given)
        guess = _flag_guess(str(error), command) or _choice_guess(str(error))
        hint = "" if names else f" (see {(command.prog if command else error.prog)} --help)"
        message = f"{name_options(str(error), names)}{guess}{hint}"
        sys.stderr.write(f"reviewgate: error: {runner_line(message)}\n")
        publishing = command is None or command.prog.split()[-1] in PUBLISHING_COMMANDS
        return stopped(EXIT_USAGE, message) if publishing else EXIT_USAGE
    warnings.showwarning = _show_warning
    # Only the commands that set step outputs say in them that they stopped.
    end = stopped if arguments.command in PUBLISHING_COMMANDS else _exit_code_only
    try:
        try:
            return COMMANDS[arguments.command](arguments, out)
        finally:
            progress.finish()  # before the error line: a terminal's status line is cleared, a group closed
    except ReviewgateError as error:
        sys.stderr.write(f"reviewgate: error: {runner_line(name_options(str(error), names))}\n")
        return end(error.exit_code, name_options(str(error), names))
    except GitFailure as error:
        sys.stderr.write(f"reviewgate: error: {runner_line(name_options(str(error), names))}\n")
        return end(EXIT_BLOCKED, name_options(str(error), names))
    except KeyboardInterrupt:
        sys.stderr.write("reviewgate: interrupted\n")
        return 130
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            return _internal_error(error, end)
        where = f" writing {error.filename}" if error.filename else ""
        message = (f"{(error.strerror or str(error)).lower()}{where}: the review was not completed; "
                   "free space on the runner and re-run")
        sys.stderr.write(f"reviewgate: {runner_line(message)}\n")
        return end(EXIT_BLOCKED, message)
    except Exception as error:  # noqa: BLE001 - an internal error must block, never approve
        return _internal_error(error, end)


def _internal_error(error: Exception, end: Callable[[int, str], int]) -> int:
    if os.environ.get("REVIEWGATE_DEBUG"):
        import traceback  # only to debug an internal error: not loaded on every start

        traceback.print_exc()
    message = (f"internal error: {type(error).__name__}: {error} "
               "(the review was not completed; set REVIEWGATE_DEBUG=1 for a traceback)")
    sys.stderr.write(f"reviewgate: {runner_line(message)}\n")
    return end(EXIT_BLOCKED, message)


def _exit_code_only(exit_code: int, message: str) -> int:
    return exit_code


def stopped(exit_code: int, message: str) -> int:
    """`exit_code`, once GitHub's step outputs say the gate stopped before a verdict and why
    (they would be empty: nothing was published). Outside GitHub Actions, nothing else."""
    output_path, summary_path = github_step_files()
    if output_path or summary_path:
        from reviewgate.report.github_step import publish_failure  # only when a CI run stopped early

        try:
            publish_failure(output_path, summary_path, exit_code, message)
        except OSError:
            pass  # the runner's files cannot be written: the error line above is all there is
    return exit_code


def exit_with(code: int) -> NoReturn:
    """End the process with `code` once everything is written, without tearing the heap down: a
    large review holds millions of small objects (syntax trees, fingerprints) whose one-by-one
    release took 0.4-0.6 s at interpreter exit on a 20,000-line change. Every output file is
    written and closed by then, locks are the kernel's to release, and reviewgate registers no
    exit handlers."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said there
            pass
    os._exit(code)


def console() -> NoReturn:
    """The `reviewgate` command and `python -m reviewgate`."""
    exit_with(main())
