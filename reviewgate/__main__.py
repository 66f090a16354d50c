from __future__ import annotations

import sys

from reviewgate.cli import main

sys.exit(main())
