"""What the change under review does to the review policy, shown to people, never applied.

The config in force is the target side's (policy/source.py). When the branch edits it, every
setting it would relax or change is listed (both parsed configs are walked key by key, so a
setting added later is listed too): a product_question finding on the config file (it
never blocks), a note in summary.md, report.json and the PR comment. The edit takes effect after
merge. A branch config that does not parse is a correctness finding: after merge every run
would stop with exit 2.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

from reviewgate.config import Config, FailRule
from reviewgate.errors import ConfigError
from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id
from reviewgate.policy.instructions import PathInstruction
from reviewgate.policy.source import BASE_SIDE, BRANCH_FIRST, PolicyOrigin, Side, find_config
from reviewgate.text import printable

SOURCE = "reviewgate"
CATEGORY = "policy"
RULE_CHANGE = "policy/config-change"
RULE_UNPARSABLE = "policy/config-invalid"
UNSET = "(unset)"


class PolicyReview(NamedTuple):
    """The policy's part of a run: where it came from and what the branch would change."""

    origin: PolicyOrigin
    changes: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {**self.origin.to_json(), "branch_changes": list(self.changes)}


def _flatten(prefix: str, value: Any, into: dict[str, Any]) -> None:
    """Every leaf of a parsed config under dotted keys named as in the file. Dataclasses are
    walked field by field, so a setting added to config.py is compared without being listed here;
    only fields marked NOT_POLICY (where a value came from) are left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and not _is_item(value):
        for item in dataclasses.fields(value):
            if item.metadata.get("policy", True):
                key = item.metadata.get("toml_key", item.name)
                _flatten(f"{prefix}{key}." if key else prefix, getattr(value, item.name), into)
    elif isinstance(value, Mapping):
        for key, entry in value.items():
            _flatten(f"{prefix}{key}.", entry, into)
    else:
        into[prefix.removesuffix(".")] = _plain(value)


def _is_item(value: Any) -> bool:
    """A value shown as one line of text rather than walked (a fail rule, an instruction)."""
    return isinstance(value, (FailRule, PathInstruction))


def _plain(value: Any) -> Any:
    if isinstance(value, PathInstruction):
        return f"{', '.join(value.paths)}: {value.text}"
    if isinstance(value, FailRule):  # a NamedTuple: one item, not a list of its fields
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def effective_settings(config: Config) -> dict[str, Any]:
    """Every setting a config puts in force, defaults included, as dotted keys."""
    settings: dict[str, Any] = {}
    _flatten("", config, settings)
    return settings


def _show(value: Any) -> str:
    if value is None:
        return UNSET
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    return printable(str(value))


def describe_changes(before: Config, after: Config) -> tuple[str, ...]:
    """One line per setting that differs: `key: old → new`, lists also saying what they gain
    and lose (`review.exclude: [] → [**] (adds **)`)."""
    old, new = effective_settings(before), effective_settings(after)
    lines: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        line = f"{key}: {_show(was)} → {_show(now)}"
        if isinstance(was, list) and isinstance(now, list):
            added = [item for item in now if item not in was]
            dropped = [item for item in was if item not in now]
            parts = ([f"adds {', '.join(_show(item) for item in added)}"] if added else []) + (
                [f"drops {', '.join(_show(item) for item in dropped)}"] if dropped else [])
            if parts:
                line += f" ({'; '.join(parts)})"
        lines.append(line)
    return tuple(lines)


def _finding(path: str, finding_class: FindingClass, severity: Severity, rule: str, title: str, body: str,
             code: str) -> Finding:
    return Finding(
        id=make_finding_id(SOURCE, path, CATEGORY, title, code),
        finding_class=finding_class, severity=severity, category=CATEGORY, title=title, body=body,
        source=SOURCE, path=path, rule=rule,
    )


def review_policy_change(origin: PolicyOrigin, base_config: Config, head: Side) -> PolicyReview:
    """Compare the config in force (the target side's) with the one the branch holds."""
    if origin.kind == BRANCH_FIRST:
        note = (f"This repository has no review config at the target side: the change's first config "
                f"{printable(origin.path or '')} was used for this run.")
        return PolicyReview(origin, notes=(note,))
    if origin.kind != BASE_SIDE or origin.path is None:
        return PolicyReview(origin)
    explicit = origin.path if origin.explicit else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown keys on the branch are its business until merge
            found = find_config(head, explicit)
    except ConfigError as error:
        title = "The change breaks the review config: after merge every review would stop with exit 2"
        finding = _finding(origin.path, FindingClass.CORRECTNESS, Severity.MAJOR, RULE_UNPARSABLE, title,
                           f"{error}. This run used the config at the target side.", str(error))
        return PolicyReview(origin, findings=(finding,), notes=(f"The change's review config does not parse: {error}",))
    after = found.config if found is not None else Config()
    changes = describe_changes(base_config, after)
    if found is None:
        changes = (f"removes {origin.path}: the defaults would apply", *changes)
    elif found.path != origin.path:
        changes = (f"moves the config from {origin.path} to {found.path}", *changes)
    if not changes:
        return PolicyReview(origin)
    path = found.path if found is not None else origin.path
    title = "This change edits the review policy; it takes effect after merge, not in this review"
    body = ("The review config is read from the target side (the merge base), so this change was judged "
            "by the policy in force. After merge:\n" + "\n".join(f"- {line}" for line in changes))
    finding = _finding(path, FindingClass.PRODUCT_QUESTION, Severity.MAJOR, RULE_CHANGE, title, body,
                       "\n".join(changes))
    note = ("This change edits the review policy (it takes effect after merge; this review used the target "
            "side's): " + "; ".join(changes))
    return PolicyReview(origin, changes, (finding,), (note,))
