"""Errors that h5sweep reports to its users."""


class ConfigError(ValueError):
    """A config value that cannot be run; the message names the key and the value."""

    def __init__(self, key: str, value: object, reason: str):
        self.key = key
        self.value = value
        self.reason = reason
        super().__init__(f"config key {key}={value!r}: {reason}")


class RequestError(ValueError):
    """A request kept with a sweep's results (``resume.json``) that does not fit the sweep; the
    message names the file and the entry."""


class StorageFullError(OSError):
    """A filesystem under test filled while a job wrote to it; the message names the
    filesystem, its free space and what the job needed."""


class DirectoryRemovedError(OSError):
    """A filesystem's directory (``filesystems.<name>``) vanished while the sweep ran; the
    message names the key, the directory and what to do."""


def is_no_space(err: BaseException) -> bool:
    """Whether an error (the OS's, or an I/O library's wrapping it) says the device is full."""
    import errno

    return getattr(err, "errno", None) == errno.ENOSPC or "No space left on device" in str(err)


class VerificationError(RuntimeError):
    """Values read from a test file differ from what the data source says they are."""


class FaultedReadError(VerificationError):
    """A read of a store on a storage target that failed where the target emulated a fault
    (an object store's relay on the loopback, ``filesystems.<name>.s3.faults``): the emulated
    fault's failure, not the store's. Made by the read's meter: ``counts``, the read's meter
    columns, its faults among them; ``cache_state``, where its bytes came from; ``columns``,
    why it failed."""

    def __init__(self, message: str, counts: dict, cache_state: str = "cold", columns: dict | None = None):
        super().__init__(message)
        self.counts, self.cache_state, self.columns = counts, cache_state, columns or {}


def check_limit_s(key: str, value) -> None:
    """A time limit as the cases take it (``cases.write.limit_s``, ``cases.parallel.limit_s``):
    a number of seconds above 0, or None; else the error names ``key``."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not value > 0):
        raise ConfigError(key, value, "must be a number of seconds above 0, or null")
