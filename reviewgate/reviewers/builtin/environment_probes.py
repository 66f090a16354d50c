"""A function that only asks what the process runs on: the interpreter or engine, the platform, a
dependency's version (`RUBY_ENGINE == "jruby"`, `sys.platform == "win32"`,
`Rails::VERSION::MAJOR >= 7`). Its answer is fixed in any one test process; the CI matrix of
versions and platforms exercises it, not a unit test, so new, it is weak evidence of behaviour."""

from __future__ import annotations

import re

from reviewgate.reviewers.builtin.languages.shapes import FunctionShape

# Each language's ways of reading the runtime's identity. A dependency's version is read from its
# version constant (`ActiveRecord::VERSION::MAJOR`, `Rails.gem_version`), never from the
# application's own data.
_PROBE = re.compile(
    r"""
      \bRUBY_(?:ENGINE|VERSION|PLATFORM|PATCHLEVEL)\b | \bRbConfig::CONFIG\b
    | \b[A-Z]\w*(?:::[A-Z]\w*)*::VERSION\b | \b[A-Z]\w*\.gem_version\b | \bRails\.version\b
    | \bGem::(?:Version|Requirement)\b | \bGem\.loaded_specs\b | \bdefined\?\(\s*:*[A-Z]
    | \bsys\.(?:version_info|version|hexversion|platform|implementation)\b
    | \bplatform\.(?:system|python_implementation|python_version|machine|release)\(\) | \bos\.name\b
    | \bprocess\.(?:versions?|platform|arch)\b
    | \btypeof\s+[A-Za-z_$][\w$.]*\s*[!=]==?\s*["']undefined["']
    | \bruntime\.(?:GOOS|GOARCH|Version\(\))
    | \bcfg!\(
    | \bBuild\.VERSION\.SDK_INT\b | \bSystem\.getProperty\(\s*"(?:java\.(?:version|vendor)|os\.(?:name|arch))"
    | \bRuntimeInformation\.\w+ | \bEnvironment\.(?:OSVersion|Version|Is64BitProcess)\b | \bOperatingSystem\.Is\w+\(\)
    | \bPHP_(?:VERSION(?:_ID)?|MAJOR_VERSION|MINOR_VERSION|OS(?:_FAMILY)?)\b | \bversion_compare\(
    """,
    re.VERBOSE,
)


def probes_environment(shape: FunctionShape) -> bool:
    """One statement that decides nothing of its own and reads what the runtime is. The first
    line is the signature (a function written on one line decides nothing and is no evidence
    at all): a parameter named `platform` is not a probe."""
    if shape.branches or shape.statements > 1:
        return False
    body = shape.text.split("\n", 1)[1] if "\n" in shape.text else ""
    return _PROBE.search(body) is not None
