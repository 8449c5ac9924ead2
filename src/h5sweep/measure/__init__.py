"""Measuring: the measurement lock, the page cache, timing, rates, records (the read engine,
which drives backends and cases, sits above them: :mod:`h5sweep.cases.engine`)."""
