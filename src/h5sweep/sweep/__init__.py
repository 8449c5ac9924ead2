"""The sweep's definition and plan, at parse time: no I/O library is imported here; and the
stages its jobs run (:mod:`h5sweep.sweep.stages`, imported by the workflow's scripts alone)."""
