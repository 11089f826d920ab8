"""The evaluation workloads as pystencils/lbmpy update rules, and helpers to extract them.

Builders return pystencils assignments (one cell's update rule); :func:`workload_kernel`
compiles one (optionally folded) for CUDA/HIP and :func:`extract_workload` turns it into a
:class:`~pystencils_plugin.extract.ExtractedKernel`.

All fields use pystencils' ``fzyx`` layout (index 0 = x contiguous, component index slowest),
the GPU default of lbmpy and waLBerla, so warpspeed's ``x`` is index 0 of every field.

* Star stencils (Ernst et al. 2023, 5.2): ``dst[c] = sum_p w_p src[c + p]`` over the ``2 * dims *
  radius + 1`` points of a star of range ``radius``; ``radius`` ghost layers; every point has
  its own weight (a rational constant), so the rule has one multiplication per point and one
  addition per further point (25 muls + 24 adds for the 25-point stencil, i.e. 1 mul + 24 FMAs
  after contraction).
* LBM SRT pull kernels (D3Q19, D3Q27): lbmpy's ``stream_pull_collide`` update with a
  symbolic relaxation rate ``omega``, one ghost layer, incompressible equilibrium.
* Conservative Allen-Cahn interface tracking (Ernst et al. 2023, 5.3): the phase-field LB step of
  lbmpy's/waLBerla's conservative Allen-Cahn showcase (``phase_field_LB_step``): D3Q15 MRT
  pull scheme with the velocity ``u`` as input, the interface-tracking force of
  ``lbmpy.phasefield_allen_cahn`` and the updated phase field ``C_tmp`` as output.
  Difference from lbmpy's default: the paper states that the phase-field gradient needs the
  phase field of 6 neighbours (a 3D 7-point stencil), whereas
  ``lbmpy.phasefield_allen_cahn.interface_tracking_force`` with its default (the D3Q15 LB
  stencil) uses an isotropic gradient over 14 neighbours, and lbmpy 2.0's isotropic gradient
  does not support a D3Q7 stencil. ``fd_stencil='D3Q7'`` (default) therefore builds the same
  force with a second-order central-difference gradient over the 6 face neighbours
  (``grad_i = (C[+e_i] - C[-e_i]) / 2``); ``fd_stencil='D3Q15'`` uses lbmpy's function
  unchanged.

Reference: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code Generation on
Modern GPUs", Journal of Parallel and Distributed Computing, 2023.
"""

from __future__ import annotations

from typing import Any, Sequence

import sympy

from warpspeed.errors import KernelError

try:
    import pystencils as ps
except ImportError as _exc:  # pragma: no cover
    raise ImportError("pystencils_plugin needs pystencils >= 2.0") from _exc

from pystencils_plugin.extract import ExtractedKernel, extract_kernel
from pystencils_plugin.folding import create_folded_kernel
from pystencils_plugin.workload_names import (  # noqa: F401 (re-exported)
    DEFAULT_2D_DOMAIN, DEFAULT_3D_DOMAIN, DEFAULT_LBM_DOMAIN, LBMPY_WORKLOADS, PAPER_STENCIL_DOMAIN,
    PAPER_STENCIL_RADIUS, WORKLOADS,
)

#: Allen-Cahn parameters of the waLBerla showcase (used only as symbolic placeholders; the
#: values do not change the memory accesses or operation counts' structure).
ALLEN_CAHN_PARAMETERS = dict(density_heavy=1.0, density_light=0.001, dynamic_viscosity_heavy=0.03,
                             dynamic_viscosity_light=0.03, surface_tension=0.0001, mobility=0.02,
                             interface_thickness=5, gravitational_acceleration=1e-6)

_C_TYPES = {"double": "float64", "float": "float32", "float64": "float64", "float32": "float32"}


def _ctype(dtype: str) -> str:
    if dtype not in _C_TYPES:
        raise KernelError(f"dtype {dtype!r} not supported; use 'double' or 'float'")
    return {"float64": "double", "float32": "float"}[_C_TYPES[dtype]]


def _domain(domain: Sequence[int], dims: int) -> tuple[int, ...]:
    d = tuple(domain)
    if dims == 2 and len(d) == 3 and d[2] == 1:
        d = d[:2]
    if len(d) != dims or any((not isinstance(n, int)) or n <= 0 for n in d):
        raise KernelError(f"domain must be {dims} positive integers (cells), got {tuple(domain)!r}")
    return d


def star_stencil_assignments(dims: int = 3, radius: int = PAPER_STENCIL_RADIUS,
                             domain: Sequence[int] = PAPER_STENCIL_DOMAIN,
                             dtype: str = "double") -> list[Any]:
    """``dst[c] = sum_p w_p * src[c + p]`` for the star of range ``radius`` in ``dims`` D.

    Fields ``src``, ``dst`` have ``radius`` ghost layers: shape ``domain + 2 * radius``.
    Weights: ``1/2`` for the centre and ``1 / (8 * r * (axis + 1) * (2 if p < 0 else 1))``
    for the point at distance ``r`` — all distinct, so nothing is factored.
    """
    if dims not in (2, 3):
        raise KernelError(f"star stencil dims must be 2 or 3, got {dims}")
    if not isinstance(radius, int) or radius < 1:
        raise KernelError(f"stencil radius must be a positive integer, got {radius!r}")
    d = _domain(domain, dims)
    shape = ",".join(str(n + 2 * radius) for n in d)
    src, dst = ps.fields(f"src, dst: {_ctype(dtype)}[{shape}]", layout="fzyx")
    terms = [sympy.Rational(1, 2) * src.center]
    for axis in range(dims):
        for r in range(1, radius + 1):
            for sign in (-1, 1):
                offset = [0] * dims
                offset[axis] = sign * r
                weight = sympy.Rational(1, 8 * r * (axis + 1) * (2 if sign < 0 else 1))
                terms.append(weight * src[tuple(offset)])
    return [ps.Assignment(dst.center, sympy.Add(*terms))]


def box_stencil_assignments(radius: int = 1, domain: Sequence[int] = DEFAULT_3D_DOMAIN,
                            dtype: str = "double") -> list[Any]:
    """``dst[c] = sum_p w_p * src[c + p]`` over the ``(2 * radius + 1)**3`` points of a 3D box.

    ``radius`` ghost layers; the weight of the point ``(i, j, k)`` is
    ``1 / (2 + |i| + 3 |j| + 9 |k| + (27 if any offset is negative else 0))`` — distinct enough
    that pystencils factors nothing, like the star stencil's weights.
    """
    if not isinstance(radius, int) or radius < 1:
        raise KernelError(f"box radius must be a positive integer, got {radius!r}")
    d = _domain(domain, 3)
    shape = ",".join(str(n + 2 * radius) for n in d)
    src, dst = ps.fields(f"src, dst: {_ctype(dtype)}[{shape}]", layout="fzyx")
    span = range(-radius, radius + 1)
    terms = []
    for k in span:
        for j in span:
            for i in span:
                negative = 27 if min(i, j, k) < 0 else 0
                weight = sympy.Rational(1, 2 + abs(i) + 3 * abs(j) + 9 * abs(k) + negative)
                terms.append(weight * src[i, j, k])
    return [ps.Assignment(dst.center, sympy.Add(*terms))]


#: The 19 directions of the D3Q19 velocity set (rest, 6 faces, 12 edges), as (x, y, z) offsets.
D3Q19_DIRECTIONS: tuple[tuple[int, int, int], ...] = (
    (0, 0, 0),
    (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
    (1, 1, 0), (-1, 1, 0), (1, -1, 0), (-1, -1, 0),
    (1, 0, 1), (-1, 0, 1), (1, 0, -1), (-1, 0, -1),
    (0, 1, 1), (0, -1, 1), (0, 1, -1), (0, -1, -1),
)


def pull_copy_assignments(domain: Sequence[int] = DEFAULT_LBM_DOMAIN, dtype: str = "double",
                          directions: Sequence[tuple[int, int, int]] = D3Q19_DIRECTIONS) -> list[Any]:
    """``dst_i[c] = src_i[c - e_i]`` for each direction ``e_i``: a multi-array shifted copy.

    The memory pattern of a pull streaming step over ``len(directions)`` arrays (19 loads and
    19 stores per cell for the D3Q19 directions, ``fzyx`` layout, one ghost layer) with no
    arithmetic: a streaming microbenchmark for many arrays and narrow blocks, not an LBM kernel.
    """
    d = _domain(domain, 3)
    shape = ",".join(str(n + 2) for n in d)
    q = len(directions)
    src, dst = ps.fields(f"src({q}), dst({q}): {_ctype(dtype)}[{shape}]", layout="fzyx")
    return [ps.Assignment(dst.center(i), src[tuple(-c for c in e)](i)) for i, e in enumerate(directions)]


def lbm_srt_pull_assignments(stencil: str = "D3Q19", domain: Sequence[int] = DEFAULT_LBM_DOMAIN,
                             dtype: str = "double") -> Any:
    """lbmpy SRT ``stream_pull_collide`` update of ``stencil`` (``'D3Q19'``, ``'D3Q27'``,
    ``'D3Q15'``, ``'D2Q9'``) from ``src`` to ``dst``, one ghost layer, ``fzyx``."""
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil, create_lb_update_rule

    try:
        lb_stencil = LBStencil(getattr(Stencil, stencil.upper()))
    except AttributeError:
        raise KernelError(f"unknown LB stencil {stencil!r}; use e.g. 'D3Q19' or 'D3Q27'") from None
    d = _domain(domain, lb_stencil.D)
    shape = ",".join(str(n + 2) for n in d)
    q = lb_stencil.Q
    src, dst = ps.fields(f"src({q}), dst({q}): {_ctype(dtype)}[{shape}]", layout="fzyx")
    config = LBMConfig(stencil=lb_stencil, method=Method.SRT, relaxation_rate=sympy.Symbol("omega"),
                       compressible=False, kernel_type="stream_pull_collide")
    optimisation = LBMOptimisation(symbolic_field=src, symbolic_temporary_field=dst)
    return create_lb_update_rule(lbm_config=config, lbm_optimisation=optimisation)


def _central_difference_force(phi: Any, parameters: Any) -> list[sympy.Expr]:
    """lbmpy's interface-tracking force with a 7-point central-difference gradient."""
    grad = [(phi[tuple(1 if i == a else 0 for i in range(3))]
             - phi[tuple(-1 if i == a else 0 for i in range(3))]) / 2 for a in range(3)]
    norm = (sum(g * g for g in grad) + sympy.Float(1e-32)) ** sympy.Rational(1, 2)
    phi_zero = sympy.Rational(1, 2)
    fraction = (1 - 4 * (phi.center - phi_zero) ** 2) / parameters.symbolic_interface_thickness
    return [sympy.Rational(1, 3) * fraction * g / norm for g in grad]


def allen_cahn_assignments(domain: Sequence[int] = DEFAULT_LBM_DOMAIN, fd_stencil: str = "D3Q7",
                           dtype: str = "double") -> Any:
    """Conservative Allen-Cahn interface-tracking update (see the module docstring).

    Fields (``fzyx``, one ghost layer): ``h``/``h_tmp`` (15 PDFs, pull from ``h``), phase field
    ``C`` (read at the centre and its neighbours) and ``C_tmp`` (written), velocity ``u``
    (3 components, read at the centre).
    """
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil
    from lbmpy.creationfunctions import create_lb_update_rule
    from lbmpy.phasefield_allen_cahn.kernel_equations import (
        add_interface_tracking_force,
        interface_tracking_force,
    )
    from lbmpy.phasefield_allen_cahn.parameter_calculation import AllenCahnParameters
    from pystencils.simp import sympy_cse

    if fd_stencil not in ("D3Q7", "D3Q15"):
        raise KernelError(f"fd_stencil {fd_stencil!r} not supported; use 'D3Q7' (paper) or 'D3Q15' (lbmpy default)")
    d = _domain(domain, 3)
    shape = ",".join(str(n + 2) for n in d)
    ct = _ctype(dtype)
    stencil = LBStencil(Stencil.D3Q15)
    h, h_tmp = ps.fields(f"h(15), h_tmp(15): {ct}[{shape}]", layout="fzyx")
    phi, phi_tmp = ps.fields(f"C, C_tmp: {ct}[{shape}]", layout="fzyx")
    u = ps.fields(f"u(3): {ct}[{shape}]", layout="fzyx")
    parameters = AllenCahnParameters(**ALLEN_CAHN_PARAMETERS)
    relaxation_rate = 1.0 / (0.5 + (3.0 * parameters.symbolic_mobility))
    rates = [0.0] + [relaxation_rate] * stencil.D + [1.0] * (stencil.Q - stencil.D - 1)
    config = LBMConfig(stencil=stencil, method=Method.MRT, compressible=True, delta_equilibrium=False,
                       force=sympy.symbols(f"F_:{stencil.D}"), velocity_input=u, weighted=True,
                       relaxation_rates=rates, output={"density": phi_tmp},
                       kernel_type="stream_pull_collide")
    rule = create_lb_update_rule(lbm_config=config,
                                 lbm_optimisation=LBMOptimisation(symbolic_field=h, symbolic_temporary_field=h_tmp))
    if fd_stencil == "D3Q15":
        force = interface_tracking_force(phi, stencil, parameters)
    else:
        force = _central_difference_force(phi, parameters)
    rule = add_interface_tracking_force(rule, force)
    rule = rule.new_with_substitutions(parameters.parameter_map())
    return sympy_cse(rule)


def workload_assignments(name: str, domain: Sequence[int] | None = None, dtype: str = "double") -> Any:
    """The update rule of a named workload (see :data:`WORKLOADS`) on ``domain`` cells."""
    if name not in WORKLOADS:
        raise KernelError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    d = tuple(domain) if domain is not None else WORKLOADS[name][1]
    if name == "star3d-r4":
        return star_stencil_assignments(3, 4, d, dtype)
    if name == "star3d-r1":
        return star_stencil_assignments(3, 1, d, dtype)
    if name == "star2d-r1":
        return star_stencil_assignments(2, 1, d, dtype)
    if name == "box3d-r1":
        return box_stencil_assignments(1, d, dtype)
    if name == "copy19-pull":
        return pull_copy_assignments(d, dtype)
    if name == "d3q19-srt":
        return lbm_srt_pull_assignments("D3Q19", d, dtype)
    if name == "d3q27-srt":
        return lbm_srt_pull_assignments("D3Q27", d, dtype)
    return allen_cahn_assignments(d, dtype=dtype)


def workload_kernel(name: str, domain: Sequence[int] | None = None, fold: Sequence[int] = (1, 1, 1),
                    target: Any = None, dtype: str = "double") -> Any:
    """The pystencils GPU kernel of a named workload, folded by ``fold`` (x, y, z)."""
    return create_folded_kernel(workload_assignments(name, domain, dtype), fold=fold, target=target)


def extract_workload(name: str, domain: Sequence[int] | None = None, fold: Sequence[int] = (1, 1, 1),
                     target: Any = None, dtype: str = "double", **extract_kwargs: Any) -> ExtractedKernel:
    """:func:`extract_kernel` of :func:`workload_kernel` (kernel named after the workload)."""
    kernel = workload_kernel(name, domain, fold, target, dtype)
    return extract_kernel(kernel, name=extract_kwargs.pop("name", name), **extract_kwargs)
