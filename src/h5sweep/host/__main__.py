"""``python -m h5sweep.host show|tune|reset|run COMMAND...`` (see :mod:`h5sweep.host`)."""

import sys

from h5sweep.host import main

sys.exit(main())
