"""``python -m eqc.cli``: the ``eqc`` command."""

import sys

from eqc.cli import main

sys.exit(main())
