"""``python -m kernelscale.cli``: the same as the ``kernelscale`` command."""

import sys

from . import main

sys.exit(main())
