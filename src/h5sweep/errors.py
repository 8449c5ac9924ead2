"""Errors that h5sweep reports to its users."""


class ConfigError(ValueError):
    """A config value that cannot be run; the message names the key and the value."""

    def __init__(self, key: str, value: object, reason: str):
        self.key = key
        self.value = value
        self.reason = reason
        super().__init__(f"config key {key}={value!r}: {reason}")


class VerificationError(RuntimeError):
    """Values read from a test file differ from what the data source says they are."""
