"""The seeds' findings, one module per study (each module's ``FINDINGS``), assembled in
:mod:`h5sweep.analyze.findings`."""
