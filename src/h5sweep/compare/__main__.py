"""``python -m h5sweep.compare RUN_DIR RUN_DIR... --out DIR`` (see :mod:`h5sweep.compare`)."""

import sys

from h5sweep.compare import main

sys.exit(main())
