"""A case's hooks are typed: each registered one resolves to what its kind must be, and a hook
of the wrong kind or form is refused naming the case."""

import dataclasses

import pytest

from h5sweep.cases import CASE_SPECS
from h5sweep.kit.spec import HOOKS


def test_every_registered_hook_is_of_its_kind():
    resolved = 0
    for spec in CASE_SPECS:
        for name in HOOKS:
            if getattr(spec, name) is not None:
                assert spec.hook(name) is not None  # checked on the way (HookKind.check)
                resolved += 1
    assert resolved >= 5  # the cases' findings, verdicts, summary, compare and compared findings


def test_a_hook_of_the_wrong_kind_or_form_is_refused_naming_the_case():
    spec = next(s for s in CASE_SPECS if s.verdict is not None)
    # a function of the wrong parameters where a verdict (summary, measurements) is asked
    wrong = dataclasses.replace(spec, verdict="h5sweep.measure.stats:_ranks")
    with pytest.raises(TypeError, match=rf"case {spec.name}: hook h5sweep.measure.stats:_ranks must be"):
        wrong.hook("verdict")
    # something else than a tuple of findings where findings are asked
    wrong = dataclasses.replace(spec, findings="h5sweep.measure.stats:CONFIDENCE")
    with pytest.raises(TypeError, match="must be a tuple of Finding"):
        wrong.hook("findings")
    with pytest.raises(ValueError, match=rf"case {spec.name}: hook summary='no colon' is not 'module:name'"):
        dataclasses.replace(spec, summary="no colon")
