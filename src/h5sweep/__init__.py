"""h5sweep: measure how HDF5 layouts behave on real filesystems for real access patterns.

The package holds the logic of the Snakemake workflow; one module per axis of the sweep:

- :mod:`h5sweep.storage.layouts`      contiguous and chunked layouts, chunk arithmetic
- :mod:`h5sweep.storage.codecs`  filters applied to chunked layouts
- :mod:`h5sweep.storage.filesystems`  where test files live, and what that storage is
- :mod:`h5sweep.storage.datasources`  the values written (synthetic spectra, chunk index, donor)
- :mod:`h5sweep.cases`        access cases (write, slice, spectra, subcube)

and the stages of the workflow: :mod:`h5sweep.cases.write`, :mod:`h5sweep.cases.engine`,
:mod:`h5sweep.analyze.aggregate`, :mod:`h5sweep.report.figures`.
"""

__version__ = "0.1.0"
