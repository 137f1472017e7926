"""Suite-wide settings: hypothesis runs derandomized in CI (the same examples every run), so a
failure is reproducible and the suite cannot flake; locally it explores as usual."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))
