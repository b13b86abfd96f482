"""What this installation of regiontrace was built against, and where its
parts are.

The torch this regiontrace was built against must be the one this process
imports: the extension module and the sinks link that torch's libtorch, and
another version's library has other symbols (an "undefined symbol" at load)
or other layouts (a crash later). The check runs before anything is loaded
and reads the installed torch's version file without importing torch."""

import importlib.util
import os
import re
import sys

from . import _build_info

_VERSION_LINE = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def _installed_torch_version():
    """torch.__version__ of the torch this interpreter would import, or None."""
    module = sys.modules.get("torch")
    if module is not None and hasattr(module, "__version__"):
        return str(module.__version__)
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        try:
            with open(os.path.join(folder, "version.py")) as f:
                found = _VERSION_LINE.search(f.read())
        except OSError:
            continue
        if found:
            return found.group(1)
    return None


def _same_build(built, installed):
    # "2.15.0+cu130" is not "2.15.0+cpu" (other libraries); a version known
    # only as "2.15.0" (built from Torch_DIR) matches any local label.
    if "+" in built:
        return installed == built
    return installed.split("+", 1)[0] == built


def reinstall_hint(installed):
    pin = _build_info.TORCH_VERSION.split("+", 1)[0]
    python = sys.executable or "python"
    return (f"rebuild regiontrace against the torch installed here ({python} -m pip install "
            f"--no-build-isolation --force-reinstall --no-deps <regiontrace source or sdist>), "
            f"or install the torch it was built for ({python} -m pip install torch=={pin})")


def check_torch():
    """Raises ImportError when this process cannot load this regiontrace's torch."""
    built = _build_info.TORCH_VERSION
    if not built:
        return
    installed = _installed_torch_version()
    if installed is None:
        raise ImportError(f"regiontrace was built against torch {built}, and this Python "
                          f"({sys.executable}) has no torch: " + reinstall_hint(None))
    if not _same_build(built, installed):
        raise ImportError(f"regiontrace was built against torch {built}, but this Python "
                          f"imports torch {installed}: " + reinstall_hint(installed))
    module = sys.modules.get("torch")
    abi = getattr(getattr(module, "_C", None), "_GLIBCXX_USE_CXX11_ABI", None)
    if _build_info.TORCH_CXX11_ABI and abi is not None and int(abi) != int(
            _build_info.TORCH_CXX11_ABI):
        raise ImportError(f"regiontrace was built against a torch {built} with "
                          f"_GLIBCXX_USE_CXX11_ABI={_build_info.TORCH_CXX11_ABI}, this torch "
                          f"{installed} has {int(abi)}: " + reinstall_hint(installed))


def explain_load_failure(error):
    """An ImportError of the extension module, said in terms of torch when that is the cause."""
    text = str(error)
    if _build_info.TORCH_VERSION and ("undefined symbol" in text or "libtorch" in text
                                      or "libc10" in text):
        installed = _installed_torch_version()
        return ImportError(f"regiontrace's extension module does not load with torch "
                           f"{installed or '(none)'} (built against torch "
                           f"{_build_info.TORCH_VERSION}): {text}; " + reinstall_hint(installed))
    return error


def cmake_prefix_path(package_dir):
    """The install prefix holding regiontrace's CMake package, or None (a build tree)."""
    if not _build_info.PREFIX_FROM_PACKAGE:
        return None
    prefix = os.path.normpath(os.path.join(package_dir, _build_info.PREFIX_FROM_PACKAGE))
    return prefix if os.path.isdir(prefix) else None
