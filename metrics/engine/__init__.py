"""The scoring engine: pure Python and numpy, no Django.

Plain typed data in, plain results out. The same engine serves the server, the Celery workers and the
offline commands, so a number means the same thing wherever it is shown. See docs/semantics.md.
"""
