"""The user's own modules (`ctxbandits run --import mymodule`): imported before a comparison's names
are looked up, in the parent process and in every worker.

A researcher's agent (`@agents.register("SW-LinUCB")`) or env (`gymnasium.register(...)`) lives in
their own file; importing that file registers it. A module is a dotted name importable from the
folder the command runs in (that folder is put first on `sys.path`, as `python -m` does) or a path
to a `.py` file. A spawned or Ray worker starts without the parent's imports and perhaps in another
folder, so the workers get the same list and the parent's folder as `root` and import them again
(free where they are already imported, as in a forked worker).

A result depends on the user's code as much as on its spec, so `user_code` gives the digest of the
code that defines an agent or env: part of a job's identity (experiment.job_inputs), so a rerun after
an edit recomputes instead of reusing the old numbers.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import sysconfig
import traceback
from collections.abc import Iterable
from pathlib import Path

from gym_ctxbandits.codehash import source_digest


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


def user_code(obj) -> tuple[str, str] | None:
    """(path, digest) of the user's code that defines `obj` (an agent class, an env class or
    creator): the folder of the top-level package of its module, or its single .py file (a
    `--import`ed file, a script), with the first 12 hex digits of a SHA-256 of its source as on
    disk: codehash.source_digest over the package's .py and .toml files, the file's bytes for a
    single file. None for gym-ctxbandits' own code (gym_ctxbandits, agents), an installed package,
    the standard library, or code with no file (typed into a notebook or a REPL)."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    if module is None:
        return None
    name = module.__name__.partition(".")[0]
    file = getattr(sys.modules.get(name), "__file__", None) or getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    root = path.parent if path.name == "__init__.py" else path
    ours = {Path(sys.modules[p].__file__).resolve().parent for p in ("gym_ctxbandits", "agents") if p in sys.modules}
    if root in ours or _installed(root):
        return None
    digest = source_digest({name: root}) if root.is_dir() else hashlib.sha256(root.read_bytes()).hexdigest()[:12]
    return str(root), digest


def _installed(path: Path) -> bool:
    """True for code of Python's standard library or of an installed distribution."""
    libraries = {Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(part in ("site-packages", "dist-packages") for part in path.parts) or \
        any(path.is_relative_to(lib) for lib in libraries)
