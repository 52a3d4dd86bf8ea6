"""Checks shared by the plugin-host tests (tests/test_plugin_host.py, tests/test_conformance.py)."""


def rejected(host, make, what):
    """make() must return None (nullptr) and the plugin must have logged why."""
    host.take_log()
    assert make() is None, f"{what}: accepted"
    log = host.take_log()
    assert "[plugin" in log, f"{what}: returned nullptr without a message from the plugin: {log!r}"


def formats(result, pos):
    """Accepted (DataType, TensorFormat) pairs at one position of a BuildResult."""
    return {(t, f) for t in range(result.formats.shape[1]) for f in range(64) if int(result.formats[pos, t]) >> f & 1}


def replace_field(fields, name, **kw):
    """``fields`` with the field ``name`` changed by ``kw`` (type, data, length)."""
    return [type(f)(**{**f.__dict__, **kw}) if f.name == name else f for f in fields]
