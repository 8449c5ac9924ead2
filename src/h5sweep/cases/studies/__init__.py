"""The seeds' findings on the built-in read cases, one module or package per study (the rules in
:mod:`h5sweep.kit.claims`), registered by the read cases' entry in the registry
(:data:`h5sweep.cases.READ_SPEC`, its ``findings``: :data:`READ_FINDINGS`). The findings on the
write case's rows are the write case's (:mod:`h5sweep.cases.write.findings`)."""

from __future__ import annotations

from h5sweep.cases.studies import guide, iolab, kang, openmsi
from h5sweep.kit.claims import Finding

READ_FINDINGS: tuple[Finding, ...] = (*openmsi.READ, *guide.FINDINGS, *kang.FINDINGS, *iolab.FINDINGS)
