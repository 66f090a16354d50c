"""A helper the change removes, written into the function that called it: its decisions are the
caller's now, not new ones; and the look-alikes that still add decisions. Real repositories."""

from __future__ import annotations

from pathlib import Path

from testing.lenses import blocking_tests_findings, review_change

_PYTHON_HEADER = "class Scaffold:\n    def __init__(self):\n        self.handlers = {}\n\n"
_PYTHON_CALLER = (
    "    def register_error_handler(self, code_or_exception, f):\n"
    "        _register_error_handler(self, None, code_or_exception, f)\n"
)
_PYTHON_HELPER_BODY = (
    "        if isinstance(code_or_exception, HTTPException):\n"
    "            raise ValueError(f\"a handler for an instance: {code_or_exception!r}\")\n"
    "        try:\n"
    "            exc_class, code = self._get_exc_class_and_code(code_or_exception)\n"
    "        except KeyError:\n"
    "            raise KeyError(f\"{code_or_exception!r} is not a recognized HTTP error code\")\n"
)
# The helper lives in another module, which the change leaves with its other function only.
_PYTHON_KEPT = "def default_handler(error):\n    return str(error), 500\n"
_PYTHON_BASE = {
    "app/scaffold.py": _PYTHON_HEADER + _PYTHON_CALLER,
    "app/helpers.py": _PYTHON_KEPT + "\n\ndef _register_error_handler(self, key, code_or_exception, f):\n"
    + _PYTHON_HELPER_BODY.replace("        ", "    ", 1).replace("\n        ", "\n    ")
    + "    self.handlers.setdefault(key, {})[code] = (exc_class, f)\n",
}


def _python_head(extra: str = "", body: str = _PYTHON_HELPER_BODY) -> dict[str, str]:
    return {
        "app/scaffold.py": _PYTHON_HEADER + "    def register_error_handler(self, code_or_exception, f):\n"
        + body + extra + "        self.handlers.setdefault(None, {})[code] = (exc_class, f)\n",
        "app/helpers.py": _PYTHON_KEPT,
    }


def test_a_python_helper_written_into_its_one_caller_is_no_new_decision(tmp_path: Path) -> None:
    base = _PYTHON_BASE
    assert blocking_tests_findings(review_change(tmp_path / "inlined", base, _python_head())) == []
    # Two decisions more than the helper had are new, whatever was inlined beside them.
    extra = (
        "        if code in self.handlers:\n            raise ValueError(\"registered twice\")\n"
        "        if f is None:\n            raise TypeError(\"no handler\")\n"
    )
    assert blocking_tests_findings(review_change(tmp_path / "more", base, _python_head(extra))) == [
        ("tests/missing-tests", "app/scaffold.py", 6)
    ]
    # The helper removed, but the caller's new decisions are not its code, and more of them than
    # the file had: new behaviour.
    other = (
        "        if code_or_exception is None:\n            raise ValueError(\"no code\")\n"
        "        elif isinstance(code_or_exception, int):\n            exc_class, code = Exception, code_or_exception\n"
        "        elif isinstance(code_or_exception, str):\n            exc_class, code = LookupError, code_or_exception\n"
        "        elif code_or_exception is Ellipsis:\n            raise TypeError(\"no code\")\n"
        "        else:\n            exc_class, code = code_or_exception, None\n"
    )
    branch = _python_head(body=other)
    assert blocking_tests_findings(review_change(tmp_path / "rewritten", base, branch)) == [("tests/missing-tests", "app/scaffold.py", 6)]


_RUBY_CHECKS = """module Rack
  module Checks
    def check_status(status)
      raise LintError, "status must be >= 100" unless status.to_i >= 100
    end
{helper}  end
end
"""

_RUBY_HELPER = """
    def verify_header(key, value)
      if key =~ /\\A[Ss]tatus\\z/
        raise LintError, "header must not contain Status"
      end
      unless key =~ /\\A[a-zA-Z][a-zA-Z0-9_-]*\\z/
        raise LintError, "invalid header name: #{key}"
      end
    end
"""

_RUBY_LINT = """module Rack
  class Lint
    include Checks

    def check_headers(header)
      header.each do |key, value|
{body}      end
    end
  end
end
"""

_RUBY_CALL = "        verify_header(key, value)\n"
_RUBY_INLINED = """        if key =~ /\\A[Ss]tatus\\z/
          raise LintError, "header must not contain Status"
        end
        unless key =~ /\\A[a-zA-Z][a-zA-Z0-9_-]*\\z/
          raise LintError, "invalid header name: #{key}"
        end
"""


def test_a_ruby_helper_written_into_its_caller_is_no_new_decision(tmp_path: Path) -> None:
    base = {"lib/rack/checks.rb": _RUBY_CHECKS.format(helper=_RUBY_HELPER), "lib/rack/lint.rb": _RUBY_LINT.format(body=_RUBY_CALL)}
    inlined = {"lib/rack/checks.rb": _RUBY_CHECKS.format(helper=""), "lib/rack/lint.rb": _RUBY_LINT.format(body=_RUBY_INLINED)}
    assert blocking_tests_findings(review_change(tmp_path / "inlined", base, inlined)) == []
    # The helper kept (other callers may use it) and its checks copied into this caller: the
    # caller makes decisions it left to the helper before, and nothing was removed.
    copied = {"lib/rack/lint.rb": _RUBY_LINT.format(body=_RUBY_INLINED)}
    assert blocking_tests_findings(review_change(tmp_path / "copied", base, copied)) == [("tests/missing-tests", "lib/rack/lint.rb", 7)]


_RUST_HELPER_BODY = """        debug!("Usage::get_args: items={:?}", self.items);
        let mut found = Vec::new();
        for item in self.items.iter() {
            if item.starts_with('-') {
                found.push(format!("[{item}]"));
            } else if item.is_empty() {
                continue;
            } else {
                found.push(item.clone());
            }
        }
"""

# A private two-branch helper the change also adds: weak alone, it grows the file's branches, so
# the caller is not read as the file's decisions merely rearranged.
_RUST_NEW_HELPER = """
    fn title(&self) -> &str {
        if self.items.is_empty() { "" } else if self.items.len() == 1 { "Usage: " } else { "Usage:" }
    }
"""


def _rust_usage(write_args: str, rest: str) -> str:
    return (
        "pub struct Usage {\n    items: Vec<String>,\n}\n\nimpl Usage {\n"
        "    pub fn write_args(&self, out: &mut String) {\n" + write_args + "    }\n" + rest + "}\n"
    )


def test_a_rust_helper_written_into_its_caller_keeps_its_log_line(tmp_path: Path) -> None:
    # The helper's debug line, naming it in a string, comes along: no call of it is left.
    base = {"src/usage.rs": _rust_usage(
        "        for item in self.get_args() {\n            out.push_str(&item);\n        }\n",
        "\n    fn get_args(&self) -> Vec<String> {\n" + _RUST_HELPER_BODY + "        found\n    }\n",
    )}
    written = _RUST_HELPER_BODY + "        for item in found {\n            out.push_str(&item);\n        }\n"
    branch = {"src/usage.rs": _rust_usage(written, _RUST_NEW_HELPER)}
    assert blocking_tests_findings(review_change(tmp_path / "inlined", base, branch)) == []
    # The helper kept: the caller's copy of its loop is decisions the caller did not make before.
    kept = {"src/usage.rs": _rust_usage(
        written, _RUST_NEW_HELPER + "\n    fn get_args(&self) -> Vec<String> {\n" + _RUST_HELPER_BODY + "        found\n    }\n"
    )}
    assert blocking_tests_findings(review_change(tmp_path / "kept", base, kept)) == [("tests/missing-tests", "src/usage.rs", 7)]
