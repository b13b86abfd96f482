"""scikit-build-core's hooks, after one check that this environment can build
a wheel at all.

regiontrace links the libtorch of the torch installed where it is built, so
a wheel is built in the user's environment: `pip install
--no-build-isolation .`. Under pip's default isolation the build runs in a
fresh environment that has no torch (and installing one there would link a
second torch). Each failure is one line that says what to do. An sdist needs
neither torch nor a compiler."""

import importlib.util
import sys


def _stop(message):
    # SystemExit with a string: pip shows it as the build's whole output.
    raise SystemExit("regiontrace: " + message)


def _check_environment():
    python = sys.executable or "python"
    if importlib.util.find_spec("torch") is None:
        _stop(f"no torch is importable in {python}: regiontrace builds against the torch of the "
              "environment it is installed into. Install torch first (pip install torch), then "
              "build without isolation: pip install --no-build-isolation <regiontrace folder or "
              "sdist>")
    missing = [name for module, name in (("scikit_build_core", "scikit-build-core"),
                                         ("pybind11", "pybind11"))
               if importlib.util.find_spec(module) is None]
    if missing:
        _stop(f"building without isolation uses this environment's build tools, and {python} "
              f"lacks {' and '.join(missing)}: pip install {' '.join(missing)}, then pip install "
              "--no-build-isolation <regiontrace folder or sdist>")


def _backend():
    try:
        from scikit_build_core import build
    except ImportError:
        _stop(f"{sys.executable or 'python'} lacks scikit-build-core: pip install "
              "scikit-build-core, then run the same command again")
    return build


def _checked(name):
    def hook(*args, **kwargs):
        _check_environment()
        return getattr(_backend(), name)(*args, **kwargs)

    hook.__name__ = name
    return hook


def _unchecked(name):
    def hook(*args, **kwargs):
        return getattr(_backend(), name)(*args, **kwargs)

    hook.__name__ = name
    return hook


build_wheel = _checked("build_wheel")
build_editable = _checked("build_editable")
get_requires_for_build_wheel = _checked("get_requires_for_build_wheel")
get_requires_for_build_editable = _checked("get_requires_for_build_editable")
prepare_metadata_for_build_wheel = _checked("prepare_metadata_for_build_wheel")
prepare_metadata_for_build_editable = _checked("prepare_metadata_for_build_editable")
build_sdist = _unchecked("build_sdist")
get_requires_for_build_sdist = _unchecked("get_requires_for_build_sdist")
