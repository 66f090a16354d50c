"""Render the pull request comment of a 120-finding review as GitHub shows it, into a PNG for the
docs: code quoted verbatim (TypeScript arrows, generics, `&&`), the blocking findings open, the
rest folded one block per rule.

    python tools/comment_screenshot.py docs/images/comment-120-findings.png

Needs `wkhtmltoimage` (Debian: `apt-get install wkhtmltopdf`; `optipng` too, if at hand) and the test extras (markdown-it-py).
Its WebKit has no `<details>` element of its own: a closed block is drawn closed by the style
below, as a browser draws it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewgate.ci.context import CiContext  # noqa: E402
from reviewgate.findings import Finding, FindingClass, Severity  # noqa: E402
from reviewgate.forge.session import ForgeRun  # noqa: E402
from reviewgate.forge.settings import ForgeSettings  # noqa: E402
from reviewgate.report.pr_comment import render_comment  # noqa: E402
from testing.markdown_render import render_gfm  # noqa: E402
from testing.results import sample_finding, sample_result  # noqa: E402

GITHUB = CiContext(provider="github", server_url="https://github.com", repository="octo/shop",
                   run_url="https://github.com/octo/shop/actions/runs/42")
TYPESCRIPT = """export const pick = <T, K extends keyof T>(source: T, keys: K[]): Pick<T, K> =>
  keys.reduce((out, key) => (source[key] !== undefined && key in source ? { ...out, [key]: source[key] } : out),
              {} as Pick<T, K>);"""
# (rule, class, severity, how many, title, body)
RULES = (
    ("correctness/swallowed-exception", FindingClass.CORRECTNESS, Severity.MAJOR, 4,
     "Broad exception handler does nothing (`catch {}`)",
     "A failed `fetch` looks like success:\n\n```ts\ntry { await save(order) } catch {}\n```"),
    ("reuse/duplicate-code", FindingClass.SYSTEMATIC, Severity.MAJOR, 2,
     "Repeats `pick` of src/util/objects.ts:12: call it instead",
     f"This repeats 3 lines of `src/util/objects.ts:12`:\n\n```ts\n{TYPESCRIPT}\n```"),
    ("readability/long-function", FindingClass.READABILITY, Severity.MAJOR, 6,
     "`checkout` is 140 lines long", "Split the pricing from the persistence."),
    ("readability/narrating-comment", FindingClass.READABILITY, Severity.MINOR, 60,
     "Comment narrates the next line", "`// increment i` says what `i++` says."),
    ("tests/missing-test", FindingClass.CORRECTNESS, Severity.NIT, 48,
     "New branch `if (cart.items.length > 0 && user)` has no test", "Add a case with an empty cart."),
)


def findings() -> tuple[Finding, ...]:
    return tuple(
        sample_finding(path=f"src/{rule.split('/')[1]}/file_{index:02}.ts", line=10 + index, severity=severity,
                       finding_class=finding_class, category=rule.split("/")[0], rule=rule, title=title, body=body)
        for rule, finding_class, severity, count, title, body in RULES for index in range(count))


STYLE = """
body { font: 14px -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; color: #1f2328; margin: 24px;
       width: 880px; line-height: 1.5; }
code, pre { font: 12px 'DejaVu Sans Mono', monospace; background: #f6f8fa; border-radius: 6px; }
code { padding: 0.2em 0.4em; }
pre { padding: 12px; overflow: hidden; }
pre code { padding: 0; }
table { border-collapse: collapse; } td, th { border: 1px solid #d1d9e0; padding: 4px 10px; }
details { margin: 4px 0; }
details > summary { display: block; cursor: pointer; }
details:not([open]) > *:not(summary) { display: none; }
hr { border: 0; border-top: 1px solid #d1d9e0; }
a { color: #0969da; text-decoration: none; }
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the PNG to write")
    arguments = parser.parse_args()
    program = shutil.which("wkhtmltoimage")
    if program is None:
        print("comment_screenshot: wkhtmltoimage is not on PATH (Debian: apt-get install wkhtmltopdf)",
              file=sys.stderr)
        return 2
    forge = ForgeRun("github", ForgeSettings(), "http://127.0.0.1", "octo/shop", 7, "token")
    result = replace(sample_result(Path("/nonexistent"), findings=findings(), ci=GITHUB), forge=forge)
    markdown = render_comment(result, [])
    # The first blocking finding opened, as a reader who clicks it sees its code.
    body = render_gfm(markdown).replace("<details>", "<details open>", 1)
    html = f"<!doctype html><meta charset='utf-8'><style>{STYLE}</style><body>{body}</body>"
    with tempfile.TemporaryDirectory() as scratch:
        page = Path(scratch) / "comment.html"
        page.write_text(html, encoding="utf-8")
        subprocess.run([program, "--quiet", "--width", "940", "--format", "png", str(page), str(arguments.output)],
                       check=True)
    optimizer = shutil.which("optipng")  # WebKit writes it uncompressed: 4 MB, 130 KB once optimized
    if optimizer:
        subprocess.run([optimizer, "-quiet", "-o2", str(arguments.output)], check=True)
    print(f"{arguments.output}: {len(result.findings)} findings, {len(markdown):,} characters of Markdown")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
