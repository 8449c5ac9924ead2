"""Resuming raced-out stores: the request a finished sweep keeps in ``<results>/resume.json``
(written by ``python -m h5sweep.compare.whatif RUN --weights ... --resume``), and the job it adds.

A store the read race dropped (``race``) read only the rounds before it stopped. Where another
read mix could favour it, the request names it (its filesystem, backend, layout, codec and
read option); each such store then has one more job, ``query_resumed``, that writes it again
and reads it to the end on the same seeded selections, in a pass of its own. Nothing else is
read again, and no earlier record is changed: the aggregate takes the resumed reads in place
of the partial ones (:func:`h5sweep.analyze.aggregate.resumed_in_place`).
The request only grows; it is part of the sweep's results, like its records."""

from __future__ import annotations

import json
import os
from pathlib import Path

from h5sweep.storage import columns as C
from h5sweep.storage.errors import RequestError

REQUEST = "resume.json"
KEYS = (C.FILESYSTEM, C.BACKEND, C.LAYOUT_ID, C.COMPRESSION, C.READ_OPTION)


def request_path(results: str | os.PathLike) -> Path:
    return Path(results) / REQUEST


def read_request(results: str | os.PathLike) -> list[dict]:
    """The stores a finished sweep was asked to resume (none where it was never asked)."""
    path = request_path(results)
    if not path.is_file():
        return []
    try:
        stores = json.loads(path.read_text())["stores"]
    except (ValueError, KeyError, TypeError) as err:
        raise RequestError(f"{path}: not a resume request ({err}); remove it or ask again with --resume") from None
    for k, entry in enumerate(stores):
        missing = [key for key in KEYS if not isinstance(entry, dict) or not isinstance(entry.get(key), str)]
        if missing:
            raise RequestError(f"{path}: stores[{k}] lacks {', '.join(missing)}")
    return stores


def add_to_request(results: str | os.PathLike, stores: list[dict]) -> list[dict]:
    """The request with ``stores`` added (each once; written whole, never partly); the stores
    it now holds."""
    held = read_request(results)
    known = {tuple(entry[key] for key in KEYS) for entry in held}
    for entry in stores:
        key = tuple(str(entry[k]) for k in KEYS)
        if key not in known:
            held.append(dict(zip(KEYS, key, strict=True)))
            known.add(key)
    path = request_path(results)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps({"stores": held}, indent=1) + "\n")
    os.replace(partial, path)
    return held


def checked_request(sweep, results: str | os.PathLike) -> dict[str, dict[tuple, list[dict]]]:
    """The request of the sweep's results, per filesystem and store (backend, layout id,
    codec), each entry checked against the sweep: a store of its grid, in a sweep that races
    its interleaved reads, in one of its backend's read options; else a ``RequestError``
    naming the entry."""
    stores = read_request(results)
    if not stores:
        return {}
    path = request_path(results)
    grid = {(tf.filesystem.name, tf.backend.name, tf.layout.id, tf.compression.name) for tf in sweep.stores()}
    out: dict[str, dict[tuple, list[dict]]] = {}
    for k, entry in enumerate(stores):
        store = tuple(entry[key] for key in KEYS[:-1])
        where = f"{path}: stores[{k}] ({', '.join(store)})"
        if not sweep.interleave or sweep.race is None:
            raise RequestError(f"{where}: this sweep does not race its reads (interleave and race), nothing to resume")
        if store not in grid:
            raise RequestError(f"{where} is not a store of this sweep; remove the entry or the file")
        options = sweep.read_options(entry[C.BACKEND], sweep.filesystem(entry[C.FILESYSTEM]))
        labels = [option.label for option in options]
        if entry[C.READ_OPTION] not in labels:
            raise RequestError(
                f"{where}: read option {entry[C.READ_OPTION]!r} is not one of its backend's ({', '.join(labels)})"
            )
        out.setdefault(store[0], {}).setdefault(store[1:], []).append(entry)
    return out
