"""Command line: parse flags into typed options at the edge; one place maps errors to exit codes."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn, TextIO

from reviewgate import progress
from reviewgate.ci import detect, github_step_files
from reviewgate.cli_arguments import BadArguments, build_parser, choice_guess, command_parser, flag_guess, name_options
from reviewgate.config import Overrides
from reviewgate.errors import EXIT_BLOCKED, EXIT_USAGE, ReviewgateError, UsageError
from reviewgate.escaping import runner_line
from reviewgate.freeze.bundle import workspace_root
from reviewgate.freeze.freeze import describe
from reviewgate.freeze.git import GitFailure
from reviewgate.run_options import RunOptions, freeze_target, load_policy, review_policy
from reviewgate.start_up import resume_collector
from reviewgate.text import printable


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

        resume_collector()
        _start_progress(arguments.progress)
        return run_shard(options, shard, stdout)
    from reviewgate.run import run_gate  # the reviewers, forge clients and sinks: only for run

    resume_collector()  # the run's modules are loaded (start_up.py)
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
        command = command_parser(parser, given)
        guess = flag_guess(str(error), command) or choice_guess(str(error))
        hint = "" if names else f" (see {(command.prog if command else error.prog)} --help)"
        message = f"{name_options(str(error), names)}{guess}{hint}"
        sys.stderr.write(f"reviewgate: error: {runner_line(message)}\n")
        publishing = command is None or command.prog.split()[-1] in PUBLISHING_COMMANDS
        return stopped(EXIT_USAGE, message) if publishing else EXIT_USAGE
    warnings.showwarning = _show_warning
    # Only the commands that set step outputs say in them that they stopped.
    end = stopped if arguments.command in PUBLISHING_COMMANDS else _exit_code_only
    if arguments.command != "run":  # run turns it back on once its own modules are loaded (_run)
        resume_collector()
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
    """The command, once __main__.console paused the collector."""
    exit_with(main())
