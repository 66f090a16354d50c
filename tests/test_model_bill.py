"""What a model reviewer is sent (a bill proportional to what changed), checked
on the requests a real local stand-in server records: no lock file, context within its budget,
one system message for every request (the providers' prompt cache), a push's chunks asked in one
request, and a chunk (one block of a hunk) asked again only when its diff or the excerpts it was
given changed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reviewgate.config import ConfigWarning, ReviewerSettings
from reviewgate.reviewers import anthropic, openai
from reviewgate.reviewers.base import ReviewerStatus
from reviewgate.reviewers.model.chunk_work import CONTEXT_FLOOR_CHARS
from reviewgate.reviewers.model.chunking import SOME_NOTE, plan_chunks
from reviewgate.reviewers.model.contract import schema_shape, wire_schema
from reviewgate.reviewers.model.options import parse_options
from reviewgate.reviewers.model.prompt import Conversation, Message, build_conversation
from testing.cli import run_cli
from testing.model_repo import chunk_store, fast_openai, review_request, write_config
from testing.model_server import ModelServer, Recorded, Reply, finding, review_document, verdict
from testing.repo import commit, make_repo

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}
IGNORED = {".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}
LOCK_MARKER = "LOCK-FILE-CONTENT"


def _openai(server: ModelServer, **options: object) -> ReviewerSettings:
    return ReviewerSettings(name="llm", provider="openai", model="test-model", base_url=f"{server.url}/v1",
                            api_key_env="", timeout=2.0, options={"retries": 0, "verify_findings": False, **options})


def _user(post: Recorded) -> str:
    return str(post.body["messages"][1]["content"])


def _data_blocks(post: Recorded) -> list[str]:
    """The texts of the user message's DATA blocks, as sent: the diff, then the context."""
    user = _user(post)
    nonce = re.search(r"<<<DATA (\w+) BEGIN>>>", user)
    assert nonce is not None
    return [str(block) for block in re.findall(
        rf"<<<DATA {nonce.group(1)} BEGIN>>>\n(.*?)\n<<<DATA {nonce.group(1)} END>>>", user, flags=re.DOTALL)]


def _context_block(post: Recorded) -> str:
    """The text of the context's DATA block, as sent."""
    return _data_blocks(post)[1]


def _files_sent(post: Recorded) -> set[str]:
    return set(re.findall(r"=== FILE (\S+)", _user(post)))


def test_no_lock_file_reaches_any_request(tmp_path: Path) -> None:
    """Lock files beside the changed ones, ones the branch changes, and a symbol the diff calls
    that the lock files name: none of their text is sent."""
    locks = ("package-lock.json", "uv.lock", "poetry.lock", "Cargo.lock", "go.sum", "yarn.lock",
             "pnpm-lock.yaml", "Gemfile.lock", "composer.lock")
    base = {f"app/{name}": f"{LOCK_MARKER} fetch_rows( {name}\n" for name in locks}
    base["app/rows.py"] = "def fetch_rows():\n    return []\n"
    branch = {"app/report.py": "from app.rows import fetch_rows\n\nprint(fetch_rows())\n",
              "app/uv.lock": f"{LOCK_MARKER} changed\n", "web/package-lock.json": f"{LOCK_MARKER} new\n"}
    repo = make_repo(tmp_path, base, branch)
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    posts = server.posts()
    assert len(posts) == 1
    assert LOCK_MARKER not in posts[0].text
    assert not any(name in posts[0].text for name in locks)  # not even listed beside the changed ones
    assert "def fetch_rows():" in posts[0].text  # the definition still comes, as an excerpt


@pytest.mark.parametrize("budget", [400, 1500, None])
def test_context_never_exceeds_its_budget(tmp_path: Path, budget: int | None) -> None:
    """Forty helpers the diff calls, each used in many files: the context is cut at the budget
    (context_chars, default 8,000, and no longer than the chunk's diff, at least
    CONTEXT_FLOOR_CHARS), never past it, and holds excerpts, not whole files."""
    helpers = "".join(f"def helper_{index:02}(value):\n    return value + {index}\n\n\n" for index in range(40))
    users = {f"lib/use_{number}.py": "from lib.helpers import *\n\n" + "".join(
        f"x_{index} = helper_{index:02}({number})\n" for index in range(40)) for number in range(8)}
    calls = "".join(f"print(helper_{index:02}(1))\n" for index in range(40))
    repo = make_repo(tmp_path, {"lib/helpers.py": helpers, **users},
                     {"app/main.py": "from lib.helpers import *\n" + calls})  # one block: one chunk
    options = {} if budget is None else {"context_chars": budget}
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server, **options)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    context = _context_block(server.posts()[0])
    cap = min(budget or 8000, max(CONTEXT_FLOOR_CHARS, len(_data_blocks(server.posts()[0])[0])))
    assert cap == min(budget or 8000, len(_data_blocks(server.posts()[0])[0]))  # a 40-line diff: over the floor
    assert len(context) <= cap
    assert len(context) >= cap * 0.8  # the budget is used, not left empty
    assert "definition of helper_" in context
    assert "helper_39(value)" not in context or budget is None  # cut: not every helper fits


def test_a_chunk_is_sent_no_more_context_than_its_diff_is_long(tmp_path: Path) -> None:
    """Between the floor and context_chars, the context follows the diff: a diff of about 4,000
    characters calling forty helpers used in eight files is sent at most that much of their
    definitions and uses, not 8,000."""
    helpers = "".join(f"def helper_{index:02}(value):\n    return value + {index}\n\n\n" for index in range(40))
    calls = "".join(f"total_{index:02}_{part} = helper_{index % 40:02}({part}) + helper_{index % 40:02}(2)\n"
                    for index in range(40) for part in range(2))
    users = {f"lib/use_{number}.py": "from lib.helpers import *\n\n" + "".join(
        f"x_{index} = helper_{index:02}({number})\n" for index in range(40)) for number in range(8)}
    repo = make_repo(tmp_path, {"lib/helpers.py": helpers, **users},
                     {"app/main.py": "from lib.helpers import *\n" + calls})  # one block: one chunk
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    diff, context = _data_blocks(server.posts()[0])
    assert CONTEXT_FLOOR_CHARS < len(diff) < 8000
    assert CONTEXT_FLOOR_CHARS < len(context) <= len(diff)


def test_every_request_of_a_run_starts_with_the_same_system_message(tmp_path: Path) -> None:
    """Three chunks (three directories) asked in one request, twice (two runs), and their second
    looks: each kind of request has one system message, byte for byte, long enough for OpenAI's
    automatic prefix cache (1,024 tokens), holding no nonce; the chunk's data and its nonce are in
    the user message."""
    branch = {f"{name}/module.py": f"def {name}_total(items):\n    return sum(items) / len(items)\n"
              for name in ("api", "web", "jobs")}
    repo = make_repo(tmp_path, {"README.md": "base\n"}, branch)
    review = Reply(review=review_document([finding(f"{name}/module.py", 2, title=f"{name} divides by zero")
                                           for name in ("api", "web", "jobs")]))
    with ModelServer([review], verdicts=[Reply(review=verdict("confirmed"))]) as server:
        reviewer = openai.build(_openai(server, verify_findings=True))
        outcomes = [reviewer.review(review_request(repo.path)) for _ in range(2)]
    assert all(outcome.status is ReviewerStatus.OK for outcome in outcomes), outcomes[0].reason
    reviews_sent, looks_sent = server.review_posts(), server.verification_posts()
    assert len(reviews_sent) == 2 and len(looks_sent) == 6
    assert all(_files_sent(post) == set(branch) for post in reviews_sent)
    for posts in (reviews_sent, looks_sent):
        systems = {post.body["messages"][0]["content"] for post in posts}
        assert len(systems) == 1
        [system] = systems
        # The review's playbook is long enough for OpenAI's automatic prefix cache (1,024 tokens).
        assert len(system) // 4 >= 1024 or posts is looks_sent
        assert post_nonces(posts).isdisjoint(re.findall(r"[0-9a-f]{16}", system))
        assert posts[0].body["messages"][0]["role"] == "system"


def test_the_answer_schema_is_sent_once_and_the_system_message_gives_its_shape(tmp_path: Path) -> None:
    """The structured form carries the whole contract (no descriptions: a cost in every request
    that tells the model nothing the playbook does not), and then the system message does not
    state it again; the forms and agent CLIs that carry no schema get its shape in one line."""
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"app/calc.py": "def total(items):\n    return sum(items)\n"})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    body = server.posts()[0].body
    system, schema = body["messages"][0]["content"], body["response_format"]["json_schema"]["schema"]
    assert schema == wire_schema() and "description" not in json.dumps(schema)
    assert '"severity"' not in system and '"additionalProperties"' not in system
    assert "One JSON object matching the answer's schema, nothing else." in system
    # OpenAI caches the schema with the system message as one prefix: 1,024 tokens or more.
    assert (len(system) + len(json.dumps(schema))) // 4 >= 1024
    prompt = build_conversation("DIFF", "CONTEXT").as_text()  # what an agent CLI reads: no schema beside it
    assert schema_shape(wire_schema()) in prompt and '"severity":"blocker"|"major"|"minor"|"nit"' in prompt


def test_a_second_look_sends_its_schema_once(tmp_path: Path) -> None:
    """The second look's response_format carries its schema (with its descriptions); its system
    message does not state the schema again (it did, whole, as JSON)."""
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"app/calc.py": "def mean(items):\n    return sum(items) / len(items)\n"})
    review = Reply(review=review_document([finding("app/calc.py", 2, title="divides by zero")]))
    with ModelServer([review], verdicts=[Reply(review=verdict("confirmed"))]) as server:
        outcome = openai.build(_openai(server, verify_findings=True)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    [look] = server.verification_posts()
    schema = look.body["response_format"]["json_schema"]["schema"]
    system = look.body["messages"][0]["content"]
    assert schema["required"] == ["verdict", "severity", "reason", "failure_scenario"]
    assert "failure_scenario" in system and '"confirmed"|"refuted"' not in system
    assert schema["properties"]["reason"]["description"] not in system


def test_a_server_refusing_the_schema_gets_its_shape_in_the_system_message_for_the_rest_of_the_run(
        tmp_path: Path) -> None:
    """A server that refuses llama.cpp's json_object + schema is asked with bare json_object, which
    carries no schema: from then on the system message states the shape, the same in each request."""
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"app/calc.py": "def total(items):\n    return sum(items)\n"})
    refused = Reply(status=400, body={"error": {"message": "response_format: 'schema' is not supported"}})
    with ModelServer([refused, Reply(review=review_document())]) as server:
        reviewer = openai.build(_openai(server, response_format="json_object_with_schema"))
        outcomes = [reviewer.review(review_request(repo.path)) for _ in range(2)]  # one request each
    assert all(outcome.status is ReviewerStatus.OK for outcome in outcomes), outcomes[0].reason
    first, *weaker = server.posts()
    assert first.body["response_format"]["schema"] == wire_schema()
    assert schema_shape(wire_schema()) not in first.body["messages"][0]["content"]
    assert len(weaker) == 2 and all(post.body["response_format"] == {"type": "json_object"} for post in weaker)
    systems = {post.body["messages"][0]["content"] for post in weaker}
    assert len(systems) == 1 and schema_shape(wire_schema()) in systems.pop()
    assert any("asked with json_object instead for the rest of the run" in note for note in outcomes[0].notes)


def post_nonces(posts: list[Recorded]) -> set[str]:
    return {match for post in posts for match in re.findall(r"<<<DATA (\w+) BEGIN>>>", _user(post))}


def test_anthropic_with_the_hour_long_cache_marks_its_system_block_on_a_push_within_the_hour(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    repo = make_repo(tmp_path, {"README.md": "base\n"},
                     {f"{name}/module.py": f"def {name}():\n    return 1\n" for name in ("api", "web")})
    usage = {"input_tokens": 300, "cache_read_input_tokens": 2000, "output_tokens": 50}
    with ModelServer([Reply(review=review_document(), usage=usage)]) as server:
        settings = ReviewerSettings(name="claude", provider="anthropic", model="test-model", base_url=server.url,
                                    timeout=2.0, options={"retries": 0, "verify_findings": False, "cache_ttl": "1h",
                                                          "input_price": 3.0, "output_price": 15.0})
        reviewer = anthropic.build(settings)
        store = chunk_store(tmp_path / "cache", "claude")
        # One request each: two pushes within the hour, the second writing what a third would read.
        outcomes = [reviewer.review(review_request(repo.path), store)]
        commit(repo.path, {"web/module.py": "def web():\n    return 2\n"})
        outcomes.append(reviewer.review(review_request(repo.path), store))
    posts = server.posts()
    assert len(posts) == 2
    blocks = [post.body["system"] for post in posts]
    assert [block.get("cache_control") for block in blocks[0]] == [None]  # nothing said another push follows
    assert [block["cache_control"] for block in blocks[1]] == [{"type": "ephemeral", "ttl": "1h"}]
    assert blocks[1][0]["type"] == "text" and "independent code reviewer" in blocks[1][0]["text"]
    assert blocks[0][0]["text"] == blocks[1][0]["text"]
    # The forced tool carries the schema: the system block does not state its shape again.
    assert posts[0].body["tools"][0]["input_schema"] == wire_schema()
    assert schema_shape(wire_schema()) not in blocks[0][0]["text"]
    # The cached tokens are counted and priced at a tenth: (300×3 + 2000×0.3 + 50×15) / 1e6.
    outcome = outcomes[1]
    assert outcome.usage.cached_input_tokens == 2000 and outcome.usage.input_tokens == 2300
    assert outcome.usage.cost == pytest.approx((300 * 3.0 + 2000 * 0.3 + 50 * 15.0) / 1e6)


ORDERS = "def place_order(items):\n    total = sum(items)\n    return total\n"
PAGES = "from api.orders import place_order\n\n\ndef render_page(items):\n    return place_order(items)\n"
TASKS = "def run_tasks(queue):\n    return list(queue)\n"


def test_a_push_asks_again_only_the_chunks_whose_diff_or_excerpts_changed(tmp_path: Path) -> None:
    """Three files in one request; web/ calls api/'s place_order, so its context quotes the
    definition. A push to jobs/ asks for jobs/ alone; lines added above place_order (its text
    unchanged, its line numbers shifted) ask for the new lines alone; a change to place_order's
    body asks, in one request, for that block of api/ and for web/, which quotes it: not jobs/, and
    not api/'s unchanged new lines."""
    repo = make_repo(tmp_path, {"README.md": "base\n", **IGNORED},
                     {"api/orders.py": ORDERS, "web/pages.py": PAGES, "jobs/tasks.py": TASKS})
    with ModelServer([Reply(review=review_document())]) as server:
        write_config(repo.path, "openai", fast_openai(server.url), cache=True)

        def push(files: dict[str, str]) -> list[Recorded]:
            if files:
                commit(repo.path, files, "a push")
            start = len(server.posts())
            result = run_cli(repo.path, "run", "--base", "main", env=KEY)
            assert result.returncode == 0, result.stderr
            return server.posts()[start:]

        first = push({})
        to_jobs = push({"jobs/tasks.py": TASKS + "\n\ndef drop_tasks(queue):\n    queue.clear()\n"})
        shifted = push({"api/orders.py": "import logging\n\nLOG = logging.getLogger(__name__)\n\n\n" + ORDERS})
        body = push({"api/orders.py": "import logging\n\nLOG = logging.getLogger(__name__)\n\n\n"
                     + ORDERS.replace("sum(items)", "sum(items) * 2")})
    assert [_files_sent(post) for post in first] == [{"api/orders.py", "web/pages.py", "jobs/tasks.py"}]
    # The definition web/'s context quotes is in the same request's diff: not sent twice.
    assert "place_order" not in _context_block(first[0])
    assert [_files_sent(post) for post in to_jobs] == [{"jobs/tasks.py"}]
    assert "def drop_tasks(queue):" in _data_blocks(to_jobs[0])[0]
    assert "def run_tasks(queue):" not in _data_blocks(to_jobs[0])[0]  # its block was answered before
    assert [_files_sent(post) for post in shifted] == [{"api/orders.py"}]
    assert "def place_order(items):" not in _data_blocks(shifted[0])[0]
    assert [_files_sent(post) for post in body] == [{"api/orders.py", "web/pages.py"}]
    diff = _data_blocks(body[0])[0]
    assert "sum(items) * 2" in diff and "LOG = logging" not in diff
    assert f"=== FILE api/orders.py (added) === {SOME_NOTE}" in diff


def test_the_old_context_tokens_key_warns_naming_its_replacement(tmp_path: Path) -> None:
    with ModelServer([]) as server, pytest.warns(ConfigWarning) as warned:
        openai.build(_openai(server, context_tokens=24000))
    assert [str(item.message) for item in warned] == [
        ".reviewgate.toml: reviewer.llm.context_tokens: no longer read: the context budget is context_chars "
        "(characters per chunk, default 8000)"]


def _module(name: str, functions: int) -> str:
    return "".join(f"def {name}_{index}(value):\n    return value * {index} + {len(name)}\n\n\n"
                   for index in range(functions))


def test_a_push_to_one_file_re_sends_only_its_new_block_in_one_request(tmp_path: Path) -> None:
    """Two large files and two small ones are one request; a push that appends a function to one
    large file asks one request holding only that function: not the file's other seventy, not
    the other files."""
    branch = {"src/core.py": _module("core", 70), "src/types.py": _module("types", 70),
              "docs/a.py": "A = 1\n", "docs/b.py": "B = 2\n"}
    repo = make_repo(tmp_path, {"README.md": "base\n", **IGNORED}, branch)
    with ModelServer([Reply(review=review_document())]) as server:
        write_config(repo.path, "openai", fast_openai(server.url), cache=True)
        first = run_cli(repo.path, "run", "--base", "main", env=KEY)
        sent_first = [_files_sent(post) for post in server.posts()]
        commit(repo.path, {"src/types.py": _module("types", 70) + "def extra(value):\n    return value\n"}, "push")
        second = run_cli(repo.path, "run", "--base", "main", env=KEY)
        posts_second = server.posts()[len(sent_first):]
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert sent_first == [set(branch)]
    assert [_files_sent(post) for post in posts_second] == [{"src/types.py"}]
    diff = _data_blocks(posts_second[0])[0]
    assert "def extra(value):" in diff and "def types_0(" not in diff and "def types_69(" not in diff


_FIRST_ADDED = re.compile(r"^\+ *(\d+)\| (.*)$", re.MULTILINE)


def _on_first_added_lines(body: object) -> Reply | None:
    """A finding at the first added line of each hunk of a review request's diff, titled with
    its text (a packed request answers for every chunk it holds)."""
    if not isinstance(body, dict) or "messages" not in body or "record_review" not in str(body):
        return None
    user = str(body["messages"][-1]["content"])
    nonce = re.search(r"<<<DATA (\w+) BEGIN>>>", user)
    if nonce is None:
        return Reply(review=review_document())
    diff = user.split(f"<<<DATA {nonce.group(1)} BEGIN>>>\n", 1)[1].split(f"<<<DATA {nonce.group(1)} END>>>", 1)[0]
    path = re.search(r"=== FILE (\S+)", diff)
    found = [finding(path.group(1), int(added.group(1)), title=added.group(2).strip())
             for hunk in re.split(r"\n@@[^\n]*\n", diff)[1:]
             if path is not None and (added := _FIRST_ADDED.search(hunk))]
    return Reply(review=review_document(found))


TOP = "import math\nimport os\nimport sys\n\n\nLIMIT = 10\n"  # 7 lines above the file's first


def _large_file(changed: bool, top: str = "", tweak: int | None = None) -> str:
    """Eighty functions far enough apart that a change to each body is a hunk of its own."""
    lines = [top] if top else []
    for index in range(80):
        body = f"    return compute_the_total_for_bucket_number_{index}(value) * {index}"
        if changed:
            body = f"    return compute_the_adjusted_total_for_bucket_number_{index}(value) + {index}"
        if tweak == index:
            body += "  # tweaked"
        lines += [f"def bucket_{index}(value):", *(f"    # note {index}.{line}" for line in range(6)), body, "", ""]
    return "\n".join(lines) + "\n"


def _lines_of(findings: object) -> dict[str, int]:
    return {item.title: item.line for item in findings}  # type: ignore[attr-defined]


def test_a_push_that_shifts_a_large_file_re_sends_only_the_block_it_changed_and_moves_reused_findings(
        tmp_path: Path) -> None:
    """Eighty hunks of one file, one chunk each, asked in one request whose answer has a finding
    on each: seven lines added above them re-send only the new lines, and every hunk's stored finding is placed on its line's new number (the same
    code; 7 lines down, further than placement's nearby move could mend), never on the old one. A
    changed line inside one hunk makes that hunk miss: asked again, alone."""
    repo = make_repo(tmp_path, {"README.md": "base\n", "app/buckets.py": _large_file(False)},
                     {"app/buckets.py": _large_file(True)})
    chunks = plan_chunks(review_request(repo.path).target.files, 100_000).chunks
    assert len(chunks) == 80
    store = chunk_store(tmp_path / "cache", "llm")
    with ModelServer([], responder=_on_first_added_lines) as server:
        reviewer = openai.build(_openai(server))
        first = reviewer.review(review_request(repo.path), store)
        asked_first = len(server.posts())
        commit(repo.path, {"app/buckets.py": _large_file(True, top=TOP)}, "shift everything by 7 lines")
        shifted = reviewer.review(review_request(repo.path), store)
        shift_posts = server.posts()[asked_first:]
        commit(repo.path, {"app/buckets.py": _large_file(True, top=TOP, tweak=25)}, "one line")
        tweaked = reviewer.review(review_request(repo.path), store)
        tweak_posts = server.posts()[asked_first + len(shift_posts):]
    assert asked_first == 1 and first.status is ReviewerStatus.OK, first.reason
    assert len(first.findings) == 80  # the one answer, split back to the eighty chunks
    assert len(shift_posts) == 1 and "bucket_number_0(" not in _data_blocks(shift_posts[0])[0]
    assert shifted.chunks.reused == 80
    before, after = _lines_of(first.findings), _lines_of(shifted.findings)
    moved = {title: line for title, line in after.items() if title in before}
    assert len(moved) == 80
    assert all(line == before[title] + 7 for title, line in moved.items())
    head = _large_file(True, top=TOP).split("\n")  # the shifted head
    assert {title: head[line - 1].strip() for title, line in moved.items()} == {title: title for title in moved}  # the same code
    assert len(tweak_posts) == 1 and tweaked.chunks.reviewed == 1
    tweak_diff = _data_blocks(tweak_posts[0])[0]
    assert "bucket_number_25(value) + 25  # tweaked" in tweak_diff and "bucket_number_24(" not in tweak_diff
    tweaked_lines = _lines_of(tweaked.findings)
    assert {title: line for title, line in tweaked_lines.items() if "_25(" not in title} == {
        title: line for title, line in after.items() if "_25(" not in title}


def test_a_directory_is_listed_once_per_request_without_the_files_its_diff_shows(tmp_path: Path) -> None:
    """Two changed files of one directory asked in one request: each chunk's listing leaves out
    only its own file, so sent as they are they would name each other. The request lists the
    directory once, naming only the file it does not show."""
    base = {"app/orders.py": "def orders():\n    return []\n", "app/users.py": "def users():\n    return []\n",
            "app/settings.py": "DEBUG = False\n"}
    branch = {"app/orders.py": "def orders():\n    return [1]\n", "app/users.py": "def users():\n    return [2]\n"}
    repo = make_repo(tmp_path, base, branch)
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    [post] = server.posts()
    assert _files_sent(post) == {"app/orders.py", "app/users.py"}
    context = _context_block(post)
    listings = re.findall(r"=== CONTEXT app/ \(the names of the files beside the changed ones\) ===\n((?:[^=\n].*\n?)*)",
                          context)
    assert len(listings) == 1, context
    assert listings[0].split() == ["settings.py"]


def test_the_excerpts_of_one_file_share_one_heading_in_line_order(tmp_path: Path) -> None:
    """The diff calls three helpers of one file, and a use of one of them stands in another: each
    file's path is said once, its excerpts in line order, each led by its reason where that
    changes; nothing an excerpt showed is left out."""
    helpers = ("def first_helper(value):\n    return value + 1\n\n\n"
               + "".join(f"FILLER_{index} = {index}\n" for index in range(14))
               + "\n\ndef second_helper(value):\n    return value * 2\n\n\n"
               + "".join(f"FILLER_{index}_b = {index}\n" for index in range(14))
               + "\n\ndef third_helper(value):\n    return value - 3\n")
    base = {"lib/helpers.py": helpers, "lib/other.py": "from lib.helpers import second_helper\n\n"
            "print(second_helper(4))\n"}
    branch = {"app/main.py": "from lib.helpers import first_helper, second_helper, third_helper\n\n"
              "print(third_helper(first_helper(second_helper(1))))\n"
              + "".join(f"total_{index} = {index} * 2  # long enough a diff for its context\n" for index in range(30))}
    repo = make_repo(tmp_path, base, branch)
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    context = _context_block(server.posts()[0])
    assert context.count("=== CONTEXT lib/helpers.py") == 1, context
    assert context.count("=== CONTEXT lib/other.py") == 1, context
    heading = context.index("=== CONTEXT lib/helpers.py")
    places = [context.index(text, heading) for text in
              ("1| def first_helper(value):", "def second_helper(value):", "def third_helper(value):")]
    assert places == sorted(places), context
    assert "… (definition of second_helper)" in context or "… (definition of third_helper)" in context, context
    assert "\n3| print(second_helper(4))" in context


def test_a_hunk_is_marked_by_its_numbered_lines_not_a_header_repeating_them(tmp_path: Path) -> None:
    """Every line the reviewer may cite carries its new-file number: the hunk's mark only
    separates it from the next and repeats no range."""
    lines = [f"value_{index} = {index}\n" for index in range(40)]
    changed = list(lines)
    changed[3], changed[30] = "value_3 = 'three'\n", "value_30 = 'thirty'\n"
    repo = make_repo(tmp_path, {"app/values.py": "".join(lines)}, {"app/values.py": "".join(changed)})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    diff = _data_blocks(server.posts()[0])[0]
    assert "new lines" not in diff, diff
    assert diff.count("\n@@\n") == 2, diff
    assert "+4| value_3 = 'three'" in diff and "+31| value_30 = 'thirty'" in diff


def test_lines_two_chunks_both_quote_are_sent_once(tmp_path: Path) -> None:
    """Two directories' chunks asked in one request: one is given second_helper's definition, the
    other a use of first_helper inside it. The lines both excerpts hold are sent once."""
    helpers = ("def first_helper(value):\n    return value + 1\n\n\n"
               + "".join(f"FILLER_{index} = {index}\n" for index in range(14))
               + "\n\ndef second_helper(value):\n    doubled = first_helper(value) * 2\n    return doubled\n")
    padding = "".join(f"total_{index} = {index} * 2  # long enough a diff for its context\n" for index in range(30))
    branch = {"app/main.py": "from lib.helpers import second_helper\n\nprint(second_helper(1))\n" + padding,
              "web/page.py": "from lib.helpers import first_helper\n\nprint(first_helper(2))\n" + padding}
    repo = make_repo(tmp_path, {"lib/helpers.py": helpers}, branch)
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    [post] = server.posts()
    assert _files_sent(post) == set(branch)
    context = _context_block(post)
    assert "def second_helper(value):" in context and "first_helper(value) * 2" in context, context
    numbers = re.findall(r"^ *(\d+)\| ", context[context.index("=== CONTEXT lib/helpers.py"):], flags=re.MULTILINE)
    assert len(numbers) == len(set(numbers)), context


def test_a_python_change_is_not_sent_the_uses_of_a_name_only_a_library_defines(tmp_path: Path) -> None:
    """`shutil.which` is called by the change and by two files of the tree, which defines no
    `which`: its uses are not context (they took the budget before); `normalize`, which the tree
    defines, still comes with its definition. In JavaScript, where a method is defined without a
    keyword, the uses of every name the change calls are kept."""
    tools = {"tools/__init__.py": "",
             "tools/helpers.py": "def normalize(name):\n    return name.strip().lower()\n",
             "tools/paths.py": "import shutil\n\n\ndef find_tool(name):\n    return shutil.which(name)\n",
             "tools/other.py": "import shutil\n\n\ndef locate(name):\n    return shutil.which(name) or name\n"}
    python = make_repo(tmp_path / "python", tools, {"tools/run.py": (
        "import shutil\n\nfrom tools.helpers import normalize\n\n\ndef run(name):\n"
        "    return shutil.which(normalize(name))\n")})
    javascript = make_repo(tmp_path / "javascript", {"web/a.js": "function start(name) {\n  return which(name);\n}\n"},
                           {"web/b.js": "function go(name) {\n  return which(name) + 1;\n}\n"})
    with ModelServer([Reply(review=review_document())]) as server:
        for repo in (python, javascript):
            outcome = openai.build(_openai(server)).review(review_request(repo.path))
            assert outcome.status is ReviewerStatus.OK, outcome.reason
    python_post, javascript_post = server.posts()
    assert "definition of normalize" in _context_block(python_post)
    assert "which" not in _context_block(python_post)
    assert "web/a.js (a use of which)" in _context_block(javascript_post)


def test_openais_own_api_with_a_prefix_below_its_cache_minimum_is_named_in_the_notes() -> None:
    """OpenAI caches from 1,024 tokens: a system message of a few words is below it there; another
    server (its own rules) and the review's own prefix (about 1,800 tokens) get no note."""
    short = Conversation("Review the diff.", (Message("user", "the diff"),))
    own = ReviewerSettings(name="llm", provider="openai", model="gpt-4.1")
    options = parse_options(own)
    note = openai.prefix_note(own, options, short)
    assert note is not None and re.fullmatch(
        r"the prompt's stable prefix \(tools, schema and system message, about \d+ tokens\) is below the 1,024 "
        r"tokens gpt-4\.1 caches at the least, so every request pays it whole", note)
    elsewhere = ReviewerSettings(name="llm", provider="openai", model="llama", base_url="http://127.0.0.1:9/v1")
    assert openai.prefix_note(elsewhere, parse_options(elsewhere), short) is None
    assert openai.prefix_note(own, options, build_conversation("a diff", "")) is None


def test_the_tools_sent_with_every_request_describe_an_argument_once(tmp_path: Path) -> None:
    """The tools' schemas are part of the stable prefix every request pays for: an argument two
    tools share (the side, the symbol) is described where it is first offered, not again."""
    repo = make_repo(tmp_path, {"app/calc.py": "def add(a, b):\n    return a + b\n"},
                     {"app/calc.py": "def add(a, b):\n    return b + a\n"})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_openai(server, tools=True)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    [post] = server.posts()
    described = [text for tool in post.body["tools"]
                 for schema in tool["function"]["parameters"]["properties"].values()
                 for text in [schema.get("description")] if text]
    assert described and len(described) == len(set(described)), described
