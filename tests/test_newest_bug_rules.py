"""False-positive kinds that whole-tree scans found in the newest bug rules (an error wrapped
without its cause, a case-sensitive URL scheme check), each beside the bug it resembles, which
must still be reported. The must-find cases and look-alikes are in tests/corpus/bug-kinds.toml."""

from __future__ import annotations

from pathlib import Path

from testing.lenses import review_change

BASE = {"README.md": "project\n"}


def _found(findings: list, rule: str) -> list[tuple[str, int | None]]:  # type: ignore[type-arg]
    return sorted((item.path, item.line) for item in findings if item.rule == rule)


def test_a_cause_dropped_after_its_trace_was_logged_is_not_reported(tmp_path: Path) -> None:
    logged = (
        "export function load(logger, name, requireDriver) {\n"
        "  try {\n"
        "    return requireDriver(name);\n"
        "  } catch (e) {\n"
        "    logger.error(`cannot load ${name}\\n${e.stack}`);\n"
        "    throw new Error(`cannot load ${name}: ${e.message}`);\n"
        "  }\n"
        "}\n"
    )
    dropped = logged.replace("    logger.error(`cannot load ${name}\\n${e.stack}`);\n", "    logger.error(`cannot load ${name}`);\n")
    java = (
        "package shop;\n\n"
        "public class Drivers {\n"
        "    public Object load(String name) {\n"
        "        try {\n"
        "            return Class.forName(name);\n"
        "        } catch (ClassNotFoundException e) {\n"
        "            e.printStackTrace();\n"
        '            throw new IllegalStateException("no driver " + name + ": " + e.getMessage());\n'
        "        }\n"
        "    }\n"
        "}\n"
    )
    findings = review_change(
        tmp_path, BASE, {"src/logged.js": logged, "src/dropped.js": dropped, "src/main/java/shop/Drivers.java": java}
    )
    assert _found(findings, "correctness/error-cause-dropped") == [("src/dropped.js", 6)]
