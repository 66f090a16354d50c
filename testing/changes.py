"""Changes that tests put on a branch, shared so each fires exactly the findings it is for."""

from __future__ import annotations

# A broad handler that swallows the failure: one correctness/swallowed-failure finding on
# load.py line 4. It comes with a test change, so the tests lens has nothing to say.
SWALLOWING_SOURCE = "def load():\n    try:\n        return open('x').read()\n    except Exception:\n        pass\n"
SWALLOWING_CHANGE = {
    "load.py": SWALLOWING_SOURCE,
    "tests/test_load.py": "from load import load\n\n\ndef test_load():\n    assert load() is None\n",
}
