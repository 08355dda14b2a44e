"""``python -m tammi_rl.cli``: the same as the ``tammi-rl`` command."""

import sys

from tammi_rl.cli.main import main

sys.exit(main())
