"""`correctness/not-found-index-as-bound`: a substring search's -1 used as a slice bound with
nothing that checks it, in each language, beside the look-alikes that check, shift or guard it."""

from __future__ import annotations

from pathlib import Path

from testing.lenses import found_at, review_change

BASE = {"README.md": "project\n"}
RULE = "correctness/not-found-index-as-bound"


GO = """\
package middleware

import "strings"

func split(pkg string) (string, string) {
	idx := strings.Index(pkg, ".")
	method := pkg[idx:]
	return pkg[0:idx], method
}

func checked(pkg string) string {
	idx := strings.LastIndex(pkg, "/")
	if idx < 0 {
		return pkg
	}
	return pkg[idx:]
}

func shifted(pkg string) string {
	idx := strings.LastIndex(pkg, "/")
	return pkg[idx+1:] + pkg[strings.Index(pkg, ".")+1:]
}

func inline(pkg string) string {
	return pkg[strings.Index(pkg, "."):]
}

func contained(pkg string) string {
	if strings.Contains(pkg, ".") {
		return pkg[strings.Index(pkg, "."):]
	}
	return pkg
}
"""

PYTHON = """\
def split(name):
    head = name[: name.find(".")]
    dot = name.rfind(".")
    return head, name[dot:]


def checked(name):
    dot = name.find(".")
    if dot == -1:
        return name
    return name[dot:]


def shifted(name):
    return name[name.find(":") + 1 :]


def contained(name):
    if "." in name:
        return name[name.find(".") :]
    return name


def clamped(name):
    dot = max(name.find("."), 0)
    return name[dot:]
"""

JAVASCRIPT = """\
export function split(path) {
  const query = path.slice(path.indexOf('?'));
  const dot = path.lastIndexOf('.');
  return [query, path.substring(0, dot)];
}

export function checked(path) {
  const dot = path.lastIndexOf('.');
  if (dot === -1) return path;
  return path.slice(dot);
}

export function shifted(path) {
  return path.slice(path.indexOf(':') + 1);
}

export function contained(path) {
  return path.includes('?') ? path.slice(path.indexOf('?')) : '';
}
"""

JAVA = """\
package shop;

public class Names {
    public String extension(String file) {
        int dot = file.lastIndexOf('.');
        return file.substring(dot);
    }

    public String checked(String file) {
        int dot = file.lastIndexOf('.');
        return dot < 0 ? "" : file.substring(dot);
    }
}
"""

CSHARP = """\
namespace Shop;

public class Names
{
    public string Extension(string file)
    {
        return file.Substring(file.LastIndexOf('.'));
    }

    public string Checked(string file)
    {
        var dot = file.LastIndexOf('.');
        if (dot >= 0)
        {
            return file.Substring(dot);
        }
        return "";
    }
}
"""


def test_an_unchecked_search_as_a_slice_bound_is_reported_in_each_language(tmp_path: Path) -> None:
    findings = review_change(
        tmp_path,
        BASE,
        {
            "middleware/stack.go": GO,
            "app/names.py": PYTHON,
            "src/paths.js": JAVASCRIPT,
            "src/main/java/shop/Names.java": JAVA,
            "src/Shop/Names.cs": CSHARP,
        },
    )
    # A search held in a name is reported at the search (the change wrote it, and the check belongs
    # right after it), once however many slices use it; one in place at the slice.
    assert found_at(findings, RULE) == [
        ("app/names.py", 2), ("app/names.py", 3),
        ("middleware/stack.go", 6), ("middleware/stack.go", 25),
        ("src/Shop/Names.cs", 7),
        ("src/main/java/shop/Names.java", 5),
        ("src/paths.js", 2), ("src/paths.js", 3),
    ]
    assert all(item.severity.value == "minor" for item in findings if item.rule == RULE)


def test_a_search_the_change_did_not_write_is_reported_at_the_slice_it_wrote(tmp_path: Path) -> None:
    base = {"app/names.py": "def extension(name):\n    dot = name.rfind(\".\")\n    return name\n"}
    branch = {"app/names.py": "def extension(name):\n    dot = name.rfind(\".\")\n    return name[dot:]\n"}
    assert found_at(review_change(tmp_path, base, branch), RULE) == [("app/names.py", 3)]


def test_a_search_in_a_test_file_is_not_reported(tmp_path: Path) -> None:
    findings = review_change(tmp_path, BASE, {"tests/test_names.py": PYTHON, "middleware/stack_test.go": GO})
    assert found_at(findings, RULE) == []
