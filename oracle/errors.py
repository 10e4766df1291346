"""The oracle's one error type: its message is the whole story (exit status 2)."""


class OracleError(Exception):
    pass
