"""Measuring: the measurement lock, the page cache, timing, rates, records, the read copies
(:mod:`h5sweep.measure.copies`) and the read engine (:mod:`h5sweep.measure.engine`), which reads
any backend's stores for any read case through what it declares of them
(:mod:`h5sweep.measure.engine.contracts`)."""
