"""Changes that tests put on a branch, shared so each fires exactly the findings it is for."""

from __future__ import annotations

# A query built by formatting a request's value in: one security/sql-injection finding, major and
# blocking by default, on load.py line 2. It comes with a test change, so the tests lens has nothing to say.
BLOCKING_SOURCE = "def load(cursor, request):\n    cursor.execute(f\"SELECT id FROM users WHERE name = '{request.args['name']}'\")\n"
BLOCKING_PATH = "load.py"
BLOCKING_LINE = 2
BLOCKING_RULE = "security/sql-injection"
BLOCKING_TITLE = "SQL built by string formatting is passed to `execute`"
BLOCKING_CHANGE = {
    BLOCKING_PATH: BLOCKING_SOURCE,
    "tests/test_load.py": "from load import load\n\n\ndef test_load(cursor):\n    assert load(cursor, 'ada') is None\n",
}

# A broad handler that swallows the failure: one correctness/swallowed-exception finding on
# load.py line 4, major and advisory by default (`[lenses] block_on_swallowed_failures` makes it
# block). It comes with a test change, so the tests lens has nothing to say.
SWALLOWING_SOURCE = "def load():\n    try:\n        return open('x').read()\n    except Exception:\n        pass\n"
SWALLOWING_CHANGE = {
    "load.py": SWALLOWING_SOURCE,
    "tests/test_load.py": "from load import load\n\n\ndef test_load():\n    assert load() is None\n",
}

# A JSON settings loader, and the same function copied under new names into the jobs module:
# one reuse/duplicate-code finding at `app/jobs.py` (the DRY lens's standard case).
DRY_EXISTING = """import json


def load_settings(path, defaults):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    merged = dict(defaults)
    for key, value in data.items():
        if key in merged and value is not None:
            merged[key] = value
    return merged
"""
DRY_COPY = """

def read_job_config(filename, fallback):
    with open(filename, encoding="utf-8") as stream:
        payload = json.load(stream)
    result = dict(fallback)
    for name, item in payload.items():
        if name in result and item is not None:
            result[name] = item
    return result
"""
DRY_JOBS = "import json\n\n\ndef run():\n    return 1\n"
