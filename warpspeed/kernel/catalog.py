"""Kernels by name: one catalog for every command (rank, predict, study, measure).

The catalog holds the built-in kernels (:mod:`warpspeed.kernel.builtin`) and the kernels of
installed plugins. A plugin registers a *kernel provider* under the entry-point group
``warpspeed.kernels`` (the pystencils plugin does so in warpspeed's ``pyproject.toml``); the
core never imports a plugin itself. A provider is an object with

* ``kernels() -> Mapping[str, str]``: its kernel names with a one-line description, and
* ``resolve(name, domain, *, fold, device, dtype) -> ResolvedKernel``: the kernel that runs
  under ``name`` for that thread folding on that device (``device`` may be None).

A plugin's kernel takes precedence over a built-in kernel of the same name. A plugin that
fails to load is reported with its real error when a kernel it may provide is asked for; only
a missing pystencils (or lbmpy) gives the installation hint, and then the built-in kernels
are used.

A plugin that can also generate kernels to run on a GPU (``warpspeed measure``) registers a
module under ``warpspeed.measurement`` (:func:`measurement_generator`) with
``measurable_kernels()``, ``default_domain(kernel)`` and ``plan_launch(kernel, config, domain,
dtype)``.

This module is the only one of warpspeed that imports from ``importlib`` (entry points, installed
versions and whether a code generator can be imported: :func:`installed_version`,
:func:`generator_version`, :func:`importable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import EntryPoint, PackageNotFoundError, entry_points, version
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

from warpspeed.errors import KernelError, WarpspeedError
from warpspeed.kernel.builtin import BUILTIN_KERNELS, builtin_kernel, element_bytes_of

if TYPE_CHECKING:
    from warpspeed.kernel.description import Kernel
    from warpspeed.hardware.device import Device

#: Entry-point group under which plugins register kernel providers.
ENTRY_POINT_GROUP = "warpspeed.kernels"

#: Entry-point group under which plugins register the generator of measured kernels.
MEASUREMENT_GROUP = "warpspeed.measurement"

#: Modules whose absence means that the code generators are not installed (they are
#: dependencies of warpspeed; an environment may still lack them).
OPTIONAL_MODULES = ("pystencils", "lbmpy")
INSTALL_HINT = "install warpspeed[pystencils] for the pystencils/lbmpy workloads"

#: Register sources: counted by ptxas, ptxas' count shipped with the plugin, estimated, given with
#: the kernel, or warpspeed's 32-register assumption (:data:`warpspeed.launch.geometry.DEFAULT_REGISTERS_PER_THREAD`).
REGISTER_SOURCES = ("ptxas", "shipped", "estimate", "given", "assumed")


@dataclass(frozen=True)
class ResolvedKernel:
    """A kernel looked up by name, with where its register count comes from.

    Attributes:
        kernel: the kernel (per-cell accesses, flops, registers per thread).
        registers_source: one of :data:`REGISTER_SOURCES`.
        registers_detail: how the count was obtained, or why a compile was not used.
    """

    kernel: Kernel
    registers_source: str
    registers_detail: str = ""


class KernelProvider(Protocol):
    """What a ``warpspeed.kernels`` entry point loads to."""

    def kernels(self) -> Mapping[str, str]: ...

    def resolve(self, name: str, domain: Sequence[int] | None, *, fold: tuple[int, int, int],
                device: "Device | None", dtype: str | None) -> ResolvedKernel: ...


@dataclass(frozen=True)
class _Plugins:
    providers: tuple[tuple[str, Any], ...]  # (entry-point name, provider)
    broken: tuple[str, ...]  # one message per plugin that failed to load
    missing: tuple[str, ...]  # plugins whose optional dependency is not installed


def _entry_points() -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def _is_missing_optional(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, is a ModuleNotFoundError of pystencils
    or lbmpy: a plugin may re-raise the missing import as a plain ImportError with its own hint."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = getattr(current, "name", None) or ""
        if isinstance(current, ModuleNotFoundError) and name.split(".")[0] in OPTIONAL_MODULES:
            return True
        current = current.__cause__ or current.__context__
    return False


def _plugins() -> _Plugins:
    providers, broken, missing = [], [], []
    for ep in _entry_points():
        try:
            providers.append((ep.name, ep.load()))
        except Exception as exc:  # a plugin's own bug must surface with its real message
            if _is_missing_optional(exc):
                missing.append(ep.name)
            else:
                broken.append(f"kernel plugin {ep.name!r} ({ep.value}) failed to load: "
                              f"{type(exc).__name__}: {exc}")
    return _Plugins(tuple(providers), tuple(broken), tuple(missing))


def kernel_names() -> dict[str, str]:
    """Every kernel name with a one-line description (built-ins, then plugins' kernels)."""
    names = dict(BUILTIN_KERNELS)
    for _, provider in _plugins().providers:
        for name, description in provider.kernels().items():
            names.setdefault(name, description)
    return names


def _unknown(name: str, plugins: _Plugins) -> WarpspeedError:
    if plugins.broken:
        return WarpspeedError(f"unknown kernel {name!r}; " + "; ".join(plugins.broken))
    known = dict(BUILTIN_KERNELS)
    for _, provider in plugins.providers:
        known.update(provider.kernels())
    hint = f" ({INSTALL_HINT})" if plugins.missing or not plugins.providers else ""
    return WarpspeedError(f"unknown kernel {name!r}; available: {', '.join(known)}{hint}")


def require_kernel(name: str) -> None:
    """Raise a clear WarpspeedError unless ``name`` is a kernel of the catalog."""
    if name in BUILTIN_KERNELS:
        return
    plugins = _plugins()
    if not any(name in provider.kernels() for _, provider in plugins.providers):
        raise _unknown(name, plugins)


def _fold(fold: Sequence[int]) -> tuple[int, int, int]:
    f = tuple(fold)
    if len(f) < 3:
        f = f + (1,) * (3 - len(f))
    if len(f) != 3 or any((not isinstance(k, int)) or k < 1 for k in f):
        raise KernelError(f"fold entries must be positive integers (1 to 3 of them: cells per thread per axis), "
                          f"got {tuple(fold)!r}")
    return f  # type: ignore[return-value]


def resolve(name: str, domain: Sequence[int] | None = None, *, fold: Sequence[int] = (1, 1, 1),
            device: "Device | str | None" = None, dtype: str | None = None) -> ResolvedKernel:
    """:func:`resolve_kernel` with the register source (see :class:`ResolvedKernel`).

    A plugin's kernel takes precedence over a built-in kernel of the same name (the built-ins
    ``star*`` describe the memory accesses of the code pystencils generates for them; the
    generated code also has its own register count). Without the plugin's optional
    dependencies the built-in is used.
    """
    plugins = _plugins()
    for _, provider in plugins.providers:
        if name in provider.kernels():
            from warpspeed.hardware.device import load_device

            dev = load_device(device) if isinstance(device, str) else device
            return provider.resolve(name, domain, fold=_fold(fold), device=dev, dtype=dtype)
    if plugins.broken and name in BUILTIN_KERNELS:
        raise WarpspeedError(f"kernel {name!r}: " + "; ".join(plugins.broken))
    if name in BUILTIN_KERNELS:  # the folding is a launch parameter only (checked by the launch)
        kernel = builtin_kernel(name, domain, element_bytes_of(dtype))
        if kernel.registers is not None:
            return ResolvedKernel(kernel, "given", "registers given with the built-in kernel")
        return ResolvedKernel(kernel, "assumed", "no register count for a hand-written kernel")
    raise _unknown(name, plugins)


def resolve_kernel(name: str, domain: Sequence[int] | None = None, *, fold: Sequence[int] = (1, 1, 1),
                   device: "Device | str | None" = None, dtype: str | None = None) -> Kernel:
    """The kernel that runs under ``name`` for thread folding ``fold`` on ``device``.

    Every command (rank, predict, study, measure) resolves names through this function, so one
    name means one binary: for a pystencils/lbmpy workload it is the kernel generated with that
    folding (its own register count; HIP code for AMD devices); the folding is still passed to
    the prediction as a launch parameter. ``dtype`` (``"double"`` or ``"float"``) selects the
    precision (default: double).
    """
    return resolve(name, domain, fold=fold, device=device, dtype=dtype).kernel


def measurement_generator() -> Any:
    """The generator of the kernels ``warpspeed measure`` runs: the module a plugin registers
    under :data:`MEASUREMENT_GROUP` (the first one installed). Raises :class:`ImportError` when
    none is installed or it cannot be imported."""
    found = tuple(entry_points(group=MEASUREMENT_GROUP))
    if not found:
        raise ImportError(f"no plugin registers the entry-point group {MEASUREMENT_GROUP!r}")
    return found[0].load()


def installed_version(distribution: str) -> str | None:
    """The version of an installed distribution (a code generator a plugin records with its
    kernels), or None when it is not installed as one (imported from a source tree)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def generator_version(package: str) -> str:
    """The version of code generator ``package`` (a top-level module that is also its distribution's
    name) that a plugin records with its kernels: the installed distribution's, read without
    importing the package; for a package imported from a source tree (no distribution), its
    module's ``__version__``."""
    found = installed_version(package)
    return found if found is not None else str(import_module(package).__version__)


def importable(module: str) -> bool:
    """Whether top-level ``module`` can be imported: found on the path, not imported (a plugin checks
    its optional dependencies with it without paying for their import)."""
    return find_spec(module) is not None
