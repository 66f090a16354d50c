"""The frozen target: the exact change under review, fixed once for every later stage.

Deliberately empty: ``reviewgate.freeze.git`` is imported by verify/, reviewers/ and
forge code, and importing a submodule runs this file, so it must not pull in
``freeze`` (which imports ci/). Import from the submodules: ``freeze`` (the freeze
itself), ``diff``, ``exclusions``, ``shallow``, ``bundle`` and ``git``.
"""
