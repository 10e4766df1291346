"""One module per reproduced figure; importing this package registers them all."""

from schedlab.experiments import idle_prev_cpu, pelt_invariance, pelt_response  # noqa: F401
