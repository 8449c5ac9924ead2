"""The kit a case is made with: what the workflow needs to know of a case (its spec,
:mod:`h5sweep.kit.spec`), the rules a finding is judged by (:mod:`h5sweep.kit.claims`), what every
read case has and the read cases' spec (:mod:`h5sweep.kit.read`), and what every figure shares
and how it is checked (:mod:`h5sweep.kit.style`, :mod:`h5sweep.kit.figcheck`). The cases
(:mod:`h5sweep.cases`) are made with it; it knows none of them."""
