"""Output files written whole or not at all.

A report, a model file or a plot is written to a temporary file beside its
destination and moved onto it (``os.replace``, atomic on one file system) only
once it is complete: a write that fails midway (a full disk, a file size
limit, an interrupt) leaves no partial file, and whatever was at the
destination before is kept.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["replacing"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def replacing(path):
    """A temporary path beside ``path`` (same suffix, so writers that read the
    format from it still do), moved onto ``path`` when the block ends without
    an exception and removed when it does not.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = target.write_text("kept")
    >>> try:
    ...     with replacing(target) as tmp:
    ...         _ = tmp.write_text("half")
    ...         raise OSError("disk full")
    ... except OSError:
    ...     pass
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('kept', ['r.json'])
    >>> with replacing(target) as tmp:
    ...     _ = tmp.write_text("whole")
    >>> target.read_text()
    'whole'
    """
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        # (mkstemp makes it private; the file gets the permissions a plain open would give)
        os.chmod(tmp, 0o666 & ~_umask())
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
