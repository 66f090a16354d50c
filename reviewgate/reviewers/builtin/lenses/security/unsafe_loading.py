"""`security/unsafe-yaml` and `security/unsafe-deserialization` (Python): a document loaded by a
loader that can build arbitrary objects, `yaml.load` without a safe loader, and request data
unpickled."""

from __future__ import annotations

import ast

from reviewgate.findings import FindingClass, Severity
from reviewgate.reviewers.builtin.lenses.security.python_calls import PythonModule, dotted, keyword
from reviewgate.reviewers.builtin.rule import Example, File, Rule

UNSAFE_YAML = Rule(
    id="security/unsafe-yaml",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="YAML loaded with an unsafe loader",
    full=(
        "`yaml.load` without a safe loader can construct arbitrary objects from the document. Use "
        "`yaml.safe_load` or `Loader=yaml.SafeLoader`."
    ),
    tags=("security", "correctness", "external/cwe/cwe-502"),
    precision="high",
    fires_on="`yaml.load`/`load_all` without `SafeLoader`/`CSafeLoader`/`BaseLoader`; `yaml.unsafe_load`",
    not_on="`yaml.safe_load`, `Loader=yaml.SafeLoader`",
    fires=(
        Example(
            file=File("app/config.py", "python", """\
import yaml


def read_config(text):
    return yaml.load(text)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/config.py", "python", """\
import yaml


def read_config(text):
    return yaml.safe_load(text)
"""),
        ),
    ),
)

UNSAFE_DESERIALIZATION = Rule(
    id="security/unsafe-deserialization",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Request data deserialized with pickle",
    full=(
        "`pickle`, `dill` or `marshal` loads data taken from a request: unpickling runs code the "
        "sender chooses."
    ),
    tags=("security", "correctness", "external/cwe/cwe-502"),
    precision="medium",
    fires_on="`pickle`/`dill`/`marshal` `.loads`/`.load` of an expression mentioning `request`",
    not_on="",
    fires=(
        Example(
            file=File("app/views.py", "python", """\
import pickle


def restore(request):
    return pickle.loads(request.body)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/views.py", "python", """\
import json


def restore(request):
    return json.loads(request.body)
"""),
        ),
    ),
)
RULE_YAML = UNSAFE_YAML.id
RULE_PICKLE = UNSAFE_DESERIALIZATION.id

_YAML_LOADS = frozenset({"yaml.load", "yaml.load_all"})
_YAML_UNSAFE_LOADS = frozenset({"yaml.unsafe_load", "yaml.unsafe_load_all"})
_SAFE_YAML_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})
_PICKLE_LOADS = frozenset({"loads", "load"})
_PICKLE_MODULES = frozenset({"pickle", "cPickle", "dill", "marshal"})
# The last part of every name check_call looks for.
CALL_LEAVES = _PICKLE_LOADS | {name.rsplit(".", 1)[-1] for name in (*_YAML_LOADS, *_YAML_UNSAFE_LOADS)}


def check_call(module: PythonModule, call: ast.Call, name: str, leaf: str, first: ast.expr | None) -> tuple[str, str, str] | None:
    """(rule, what, evidence) when the call loads YAML unsafely or unpickles request data."""
    if name in _YAML_LOADS:
        loader = keyword(call, "Loader") or (call.args[1] if len(call.args) > 1 else None)
        if loader is None or dotted(loader).rsplit(".", 1)[-1] not in _SAFE_YAML_LOADERS:
            return (
                RULE_YAML,
                f"`{name}` without a safe loader can build arbitrary objects",
                "no SafeLoader, CSafeLoader or BaseLoader is given",
            )
    if name in _YAML_UNSAFE_LOADS:
        return RULE_YAML, f"`{name}` can build arbitrary objects", "the unsafe loader is named explicitly"
    if leaf in _PICKLE_LOADS and name.split(".", 1)[0] in _PICKLE_MODULES:
        if first is not None and "request" in ast.unparse(first):
            return (
                RULE_PICKLE,
                f"`{name}` of request data runs code chosen by the sender",
                "the argument mentions `request`",
            )
    return None
