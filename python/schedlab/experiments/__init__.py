"""One module per reproduced figure; importing this package registers them all."""

from schedlab.experiments import pelt_invariance  # noqa: F401
