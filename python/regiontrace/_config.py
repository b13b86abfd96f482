"""Turns init()'s keyword arguments into the configuration's dotted keys."""


def _text(key, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        # Lists are comma lists in every layer (docs/configuration.md).
        return ",".join(_text(key, v) for v in value)
    if value is None:
        raise TypeError(f"regiontrace.init: {key}=None has no meaning; leave the key out")
    return str(value)


def init_values(values, keys):
    """values: a {dotted key: value} dict; keys: keyword arguments, `__` for a dot."""
    out = {}
    for key, value in (values or {}).items():
        out[str(key)] = _text(key, value)
    for key, value in keys.items():
        if key == "sinks":
            # init(sinks=["nvtx"]): those sinks run, as REGIONTRACE_SINKS names them.
            names = [value] if isinstance(value, str) else list(value)
            for name in names:
                for one in str(name).split(","):
                    if one.strip():
                        out[f"sinks.{one.strip()}.enabled"] = "true"
            continue
        out[key.replace("__", ".")] = _text(key, value)
    return out
