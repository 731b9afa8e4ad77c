"""Writing the command's outputs (metrics JSON, traces, workloads) the way a user expects.

* ``-`` is standard output.
* A symlink is followed: its target is written, the link stays a link.
* A device, FIFO or other special file (``/dev/stdout``, a named pipe) is written in place;
  it is never replaced by a regular file.
* A regular file is replaced atomically: the data goes to a temporary file in the target's
  directory, which is renamed over the target only when complete, so an interrupted or failed
  write leaves no partial file and the old contents intact. The target keeps its permissions.
"""

from __future__ import annotations

import os
import stat
import sys

# Names for annotations only: importing typing costs `schedlab run` about 3 ms of start-up
# (issue 18), and every annotation here is a string (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, Callable, Union

    # What to write: text, bytes, or a function that writes the bytes into a binary file (a
    # large trace is produced in pieces rather than held whole in memory).
    Data = Union[str, bytes, Callable[[BinaryIO], None]]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _writer(data: Data) -> Callable[[BinaryIO], None]:
    if callable(data):
        return data
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return lambda f: f.write(raw)


def write_output(path: Union[str, os.PathLike[str]], data: Data) -> None:
    """Write ``data`` to ``path`` (see the module's rules). A system error names ``path``: not the
    temporary file written first (``.NAME.XXXX.partial`` beside the target), nor nothing (a full
    disk)."""
    path = os.fspath(path)
    try:
        _write(path, _writer(data))
    except OSError as e:
        if e.errno is None:  # this module's own errors, which name the path
            raise
        raise OSError(e.errno, e.strerror, path) from None  # (its subclass by errno)


def _write(path: str, produce: Callable[[BinaryIO], None]) -> None:
    if path == "-":
        sys.stdout.flush()
        produce(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    try:
        st = os.stat(path)  # follows symlinks, also /dev/stdout -> /proc/self/fd/1 -> a pipe
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{path}: is a directory, expected a file name")
        with open(path, "wb") as f:  # a device, FIFO or socket: written in place
            produce(f)
        return
    target = os.path.realpath(path)  # a (possibly dangling) symlink's final target
    import tempfile  # only here: it costs start-up time of every command

    directory = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".partial", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            produce(f)
            f.flush()
            os.fsync(f.fileno())
        mode = stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
