"""regiontrace's PEP 517 build backend (pyproject.toml): scikit-build-core
over the project's CMake build, plus the checks and metadata that building
against the environment's own torch needs."""
