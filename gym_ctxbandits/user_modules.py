"""The user's own modules (`ctxbandits run --import mymodule`): imported before a comparison's names
are looked up, in the parent process and in every worker.

A researcher's agent (`@agents.register("SW-LinUCB")`) or env (`gymnasium.register(...)`) lives in
their own file; importing that file registers it. A module is a dotted name importable from the
folder the command runs in (that folder is put first on `sys.path`, as `python -m` does) or a path
to a `.py` file. A spawned or Ray worker starts without the parent's imports and perhaps in another
folder, so the workers get the same list and the parent's folder as `root` and import them again
(free where they are already imported, as in a forked worker).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path


class UserModuleError(ImportError):
    """A user module that cannot be imported: not found, or raising while it runs."""


def import_modules(names: Iterable[str], root: str | None = None, given_as: str = "--import") -> None:
    """Import each module of `names` (dotted names, or paths of `.py` files relative to `root`).

    `root` (default: the current folder) goes first on `sys.path` when there is something to
    import. A module that cannot be imported is a UserModuleError of one line that starts with
    `given_as` and the name, and says how to fix it.
    """
    names = list(names)
    if not names:
        return
    root = os.path.abspath(root or os.getcwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    for name in names:
        if name.endswith(".py"):
            _import_file(Path(root, name), name, given_as)
        else:
            _import(name, f"{given_as} {name}")


def _import_file(path: Path, name: str, given_as: str) -> None:
    """Import the file `path` as the module named by its stem, its folder first on `sys.path` (so
    its classes pickle by name, as a worker needs)."""
    where = f"{given_as} {name}"
    if not path.is_file():
        raise UserModuleError(f"{where}: no such file {str(path)!r}; give the path of a .py file (relative to the "
                              "folder the command runs in) or a module name")
    folder = str(path.parent.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module = _import(path.stem, where)
    if Path(getattr(module, "__file__", "") or "").resolve() != path.resolve():
        raise UserModuleError(f"{where}: the module name {path.stem!r} is already taken by "
                              f"{getattr(module, '__file__', None) or module!r}; rename the file")


def _import(module: str, where: str):
    """`importlib.import_module(module)`, its failures as one line starting with `where`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name and (module == err.name or module.startswith(err.name + ".")):
            top = module.split(".")[0]
            raise UserModuleError(f"{where}: {err} (run from the folder that holds {top}.py or the package {top}/, "
                                  "or add that folder to PYTHONPATH)") from None
        raise UserModuleError(f"{where}: {err}, which the module imports (install it)") from None
    except Exception as err:
        message = " ".join(str(err).split())
        if not isinstance(err, SyntaxError):             # a SyntaxError's message names its file and line
            frame = traceback.extract_tb(err.__traceback__)[-1]
            message += f" ({frame.filename}, line {frame.lineno})"
        raise UserModuleError(f"{where}: importing it raised {type(err).__name__}: {message}; fix the module") from None
