"""`python -m spa.cli`: the `spa` command without its console script (a wheel unpacked
without scripts, or a test that runs the package of a given interpreter)."""

import sys

from spa.cli import main

sys.exit(main())
