"""Names of a package imported on first use (PEP 562), so that importing the package (the command
line's ``--help`` among its users) does not pay for numpy or sympy.

A package lists, for each of its modules, the names it exports from it; a *loader* is a function
of the package that imports the module and returns it. The imports stay explicit ``from ... import``
statements, so the project's import graph (``tests/project/test_architecture.py``) sees every edge.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

#: A function that imports a module (or builds an object) and returns it.
Loader = Callable[[], Any]


def lazy_exports(namespace: dict[str, Any], exports: Mapping[Loader, Sequence[str]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The package's ``__getattr__``, ``__dir__`` and ``__all__`` for ``exports`` (loader -> the
    names taken from what it returns); ``namespace``: the package's ``globals()``, where a name is
    kept once loaded."""
    owner = {name: load for load, names in exports.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        load = owner.get(name)
        if load is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(load(), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *owner})

    return __getattr__, __dir__, sorted(owner)
