"""Codecs (h5sweep.storage.codecs): the compression names a config may give, parsed and checked
against what HDF5 can store, each refusal naming the key."""

import pytest

from h5sweep.backends.hdf5_filters import create_keywords
from h5sweep.storage.codecs import compressions_from_config, parse_compression
from h5sweep.storage.errors import ConfigError


def test_none_and_gzip_levels_parse_to_h5py_arguments():
    assert create_keywords(parse_compression("none")) == {}
    gzip = parse_compression("gzip-4")
    assert (gzip.family, gzip.level) == ("gzip", 4)
    assert create_keywords(gzip) == {"compression": "gzip", "compression_opts": 4}
    assert [c.name for c in compressions_from_config(["none", "gzip-0", "gzip-9", "none"])] == [
        "none",
        "gzip-0",
        "gzip-9",
    ]


@pytest.mark.parametrize(
    "name, reason",
    [
        ("gzip-10", "out of range 0-9"),
        ("gzip", "does not match the grammar .gzip-<level 0-9>."),
        ("sperr-3", "unknown compression filter"),  # not offered: it segfaults on uint16
        ("none-1", "does not match the grammar .none."),
        ("GZIP-4", "unknown compression filter"),
    ],
)
def test_bad_filters_are_refused_naming_key_and_value(name, reason):
    with pytest.raises(ConfigError, match=reason) as err:
        compressions_from_config(["none", name])
    assert f"compression[1]={name!r}" in str(err.value)
