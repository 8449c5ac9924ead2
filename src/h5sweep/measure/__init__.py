"""Measuring: the measurement lock, the page cache, timing, the read engine, records."""
