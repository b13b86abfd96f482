"""Dynamic metadata (pyproject.toml's [[tool.dynamic-metadata]]): a wheel
requires exactly the torch release it was built against, `torch==X.Y.Z`, so
the wheel's METADATA says which torch it is for and pip keeps the two
together. The sdist pins nothing: it builds against whichever torch the
environment has."""

_state = "wheel"


def build_state(state):
    global _state
    _state = state


def dynamic_wheel(settings):
    # Decided when the wheel is built, not when the sdist is made.
    return {"dependencies": True}


def dynamic_metadata(settings, project):
    if _state == "sdist":
        return {"dependencies": []}
    import torch  # the build's own torch: the one the wheel links

    release = str(torch.__version__).split("+", 1)[0]
    return {"dependencies": [f"torch=={release}"]}
