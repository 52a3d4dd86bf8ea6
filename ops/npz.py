"""Reading the toolkit's .npz files (reproducers, baselines) with one-line errors.

Both files are zip archives of numpy arrays with a JSON ``meta`` entry; a user hands them to the
CLI, so every way they can be broken (missing, a directory, truncated, not a zip, a bare .npy,
a ``meta`` that is not a JSON object) becomes ``error(message)`` naming the file, never a
traceback.
"""
from __future__ import annotations

import contextlib
import json
import zipfile
import zlib
from typing import Iterator, Type

import numpy as np


@contextlib.contextmanager
def open_npz(path: str, where: str, kind: str, error: Type[Exception]) -> Iterator[np.lib.npyio.NpzFile]:
    """``with open_npz(path, where, kind, error) as f``: the archive at ``path``.

    ``where`` starts every message (e.g. ``"cannot read baseline 'b.npz'"``), ``kind`` names the
    file in them (``"baseline"``); ``error`` is raised for an unreadable or malformed file, and
    errors of that type raised inside the block pass through unchanged."""
    try:
        f = np.load(path, allow_pickle=False)
        if not isinstance(f, np.lib.npyio.NpzFile):
            raise error(f"{where}: it is a single .npy array, not a {kind} .npz archive")
        with f:
            yield f
    except error:
        raise
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except IsADirectoryError:
        raise error(f"{where}: it is a directory") from None
    except OSError as e:
        raise error(f"{where}: {e.strerror or e}") from None
    except (zipfile.BadZipFile, EOFError, zlib.error) as e:
        raise error(f"{where}: truncated or not a zip archive ({type(e).__name__}: {e})") from None
    except ValueError as e:  # neither a zip nor an .npy file, or an entry that needs pickle
        raise error(f"{where}: not a {kind} .npz archive ({e})") from None


def json_object(f: np.lib.npyio.NpzFile, name: str, where: str, error: Type[Exception]) -> dict:
    """Entry ``name`` of ``f``: a 0-d string array holding a JSON object, as a dict."""
    if name not in f.files:
        raise error(f"{where}: it has no {name!r} entry (entries: {', '.join(f.files)})")
    text = f[name]
    if text.shape != () or text.dtype.kind != "U":
        raise error(f"{where}: entry {name!r} must be a JSON string, got a {text.dtype} array of shape {text.shape}")
    try:
        value = json.loads(str(text))
    except json.JSONDecodeError as e:
        raise error(f"{where}: entry {name!r} is not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise error(f"{where}: entry {name!r} must be a JSON object, got {type(value).__name__}")
    return value
