"""The sweep's definition and plan, at parse time: no I/O library is imported here."""
