"""The seeds' findings on the built-in read cases, one module or package per study (the rules in
:mod:`h5sweep.cases.claims`), registered by the read cases' spec (:mod:`h5sweep.cases.read`,
its ``findings``: :data:`READ_FINDINGS`). The findings on the write case's rows are the write
case's (:mod:`h5sweep.cases.write.findings`)."""

from __future__ import annotations

from h5sweep.cases.claims import Finding
from h5sweep.cases.studies import guide, iolab, kang, openmsi

READ_FINDINGS: tuple[Finding, ...] = (*openmsi.READ, *guide.FINDINGS, *kang.FINDINGS, *iolab.FINDINGS)
