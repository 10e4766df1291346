"""One module per reproduced figure; importing this package registers them all."""

from schedlab.experiments import (  # noqa: F401
    cgroup_depth,
    almost_idle,
    governor_efficiency,
    h_load,
    grub,
    idle_prev_cpu,
    pelt_invariance,
    pelt_response,
    schedutil_ramp,
)
