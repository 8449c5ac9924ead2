"""h5sweep: measure how the layout of an array store (HDF5, Zarr, raw binary) behaves on a
filesystem for given access patterns, and recommend one.

Its layers, bottom up (``docs/architecture.md``, "Rooms"): :mod:`h5sweep.storage` (layouts,
codecs, selections, filesystems and storage targets, data sources, the columns, the errors users
see, and the recordings of :mod:`h5sweep.storage.trace`); :mod:`h5sweep.measure` (and on it the
read engine, :mod:`h5sweep.measure.engine`); :mod:`h5sweep.backends` and :mod:`h5sweep.host`;
:mod:`h5sweep.kit` (what a case is made with); :mod:`h5sweep.cases` (the access cases);
:mod:`h5sweep.sweep` (the sweep's model and plan, and the stages its jobs run);
:mod:`h5sweep.analyze`; :mod:`h5sweep.report`; :mod:`h5sweep.compare` (commands over finished
sweeps); :mod:`h5sweep.cli`, the ``h5sweep`` command.
"""

__version__ = "0.1.0"
