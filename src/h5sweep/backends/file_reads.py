"""A read option of a store read through a file object on an object store: the backend's own
option (HDF5's chunk cache) with how its file is fetched (:class:`FileRead`: fsspec's block size
and cache type, or HDF5's ROS3 driver, and a page buffer), measured as a read option of its
own. No I/O library is imported here (the workflow builds these at parse time)."""

from __future__ import annotations

from dataclasses import dataclass

from h5sweep.storage import objectstore
from h5sweep.storage.objectstore import FileRead


@dataclass(frozen=True)
class RemoteOption:
    """A backend's read option on an object store, with how its file is fetched: measured as
    a read option of its own, named by both."""

    inner: object  # the backend's own read option (HDF5: a chunk cache)
    read: FileRead

    @property
    def label(self) -> str:
        return f"{self.inner.label}, {self.read.label}"

    @property
    def setting(self) -> str:
        # the page buffer, and ROS3's URL and keys (bytes), among h5py.File's arguments
        more = f", page_buf_size={self.read.page_buffer}" if self.read.page_buffer else ""
        opened = self.inner.setting
        if self.read.driver == objectstore.ROS3:
            more = ", driver='ros3', aws_region=region, secret_id=key_id, secret_key=secret" + more
            return _with_arguments(opened.replace("(path,", "(url,", 1), more)
        fetch = f"s3fs.S3FileSystem().open(key, 'rb', block_size={self.read.block_size}, "
        fetch += f"cache_type={self.read.cache_type!r})"
        return f"{fetch}; {_with_arguments(opened, more)}"

    def columns(self) -> dict:
        return {**self.inner.columns(), **self.read.columns()}

    def holds_chunk(self, chunk_bytes: int):
        return self.inner.holds_chunk(chunk_bytes)

    def settings(self) -> dict:
        return {**self.inner.settings(), READ_KEY: self.read.settings()}

    def __getattr__(self, name: str):  # the backend's own option's attributes (nbytes, reader, ...)
        if name in ("inner", "read"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def _with_arguments(call: str, more: str) -> str:
    """A call's text with more arguments before its closing parenthesis."""
    return call[:-1] + more + ")" if call.endswith(")") else call + more


READ_KEY = "s3_read"  # where an option's settings carry how its file is fetched


def option_from_settings(entry: dict, decode) -> object:
    """A read option from a job's settings: ``decode`` (the backend's) of its own part, wrapped
    with how its file is fetched where the settings carry it."""
    if READ_KEY not in entry:
        return decode(entry)
    own = {k: v for k, v in entry.items() if k != READ_KEY}
    return RemoteOption(decode(own), FileRead(**entry[READ_KEY]))


def in_each_read(options: list, reads: tuple[FileRead, ...]) -> list:
    """Each option in each of a filesystem's file reads (the options as they are without any)."""
    return [RemoteOption(option, read) for option in options for read in reads] if reads else list(options)
