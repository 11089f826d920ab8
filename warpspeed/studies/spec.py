"""A study's description: the cross product kernels x devices x domains x configurations.

A study is described by a TOML file (see ``docs/study.md`` and ``examples/study.toml``)::

    kernels  = ["star3d-r1", "copy"]             # names as warpspeed.kernel.catalog.resolve_kernel takes
    devices  = ["A100-SXM4-40GB", "V100-PCIe-32GB"]
    domains  = [[64, 64, 64], [128, 128, 128]]   # cells (nx, ny[, nz]); nz defaults to 1
    threads  = [256]                             # threads per block: every power-of-two block
    foldings = [[1, 1, 1], [1, 2, 1]]            # cells per thread (default: none, 2 in y, 2 in z)
    max_block_z = 64                             # optional (default: the CUDA limit)
    output   = "study.csv"                       # relative to the working directory
    format   = "csv"                             # "csv" or "parquet" (default: from the suffix)
    models   = ["roofline", "interval"]          # optional: columns of further models (default: roofline)
    objective = "interval"                       # optional: what the best configuration is chosen by

It has one row per (kernel, device, domain, block, fold), enumerated in that nesting order
(blocks of each thread count in :func:`warpspeed.launch.space.block_sizes` order, foldings in
the file's order). Each row carries a stable key (``kernel|device|domain|block|fold``, e.g.
``star3d-r1|A100-SXM4-40GB|64x64x64|32x8x1|1x2x1``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.toml import read_toml
from warpspeed.kernel.limits import check_domain, check_fold
from warpspeed.launch.space import MAX_BLOCK_Z, PAPER_FOLDINGS, Config, block_sizes, fits_domain
from warpspeed.studies.models import DEFAULT_MODELS, require_models, require_study_objective, study_columns

Triple = tuple[int, int, int]

#: Output formats; the default is taken from the output file's suffix.
FORMATS: tuple[str, ...] = ("csv", "parquet")
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Suffix of the CSV journal kept beside the output while the study runs.
JOURNAL_SUFFIX = ".journal.csv"
#: Most threads per block a study may list: 64 times CUDA's and HIP's 1024, so a space of blocks no
#: GPU can launch (error rows) stays small.
MAX_STUDY_THREADS = 2**16
_SPEC_KEYS = frozenset({"kernels", "devices", "domains", "threads", "foldings", "max_block_z", "output", "format",
                        "models", "objective"})


def triple_text(values: Sequence[int]) -> str:
    """``(32, 8, 1)`` -> ``"32x8x1"``."""
    return "x".join(str(v) for v in values)


def format_for(path: Path) -> str:
    """The output format a file name implies: ``parquet`` for ``.parquet``/``.pq``, else ``csv``."""
    return "parquet" if path.suffix.lower() in PARQUET_SUFFIXES else "csv"


@dataclass(frozen=True)
class StudyPoint:
    """One row of a study: a configuration of one kernel on one device and domain (cells)."""

    kernel: str
    device: str
    domain: Triple
    threads: int
    config: Config

    @property
    def key(self) -> str:
        """The stable row key ``kernel|device|domain|block|fold``."""
        return "|".join((self.kernel, self.device, triple_text(self.domain),
                         triple_text(self.config.block), triple_text(self.config.fold)))

    @property
    def group(self) -> tuple[str, str, Triple]:
        """(kernel, device, domain): the points that share a kernel and a device model."""
        return self.kernel, self.device, self.domain


def check_study_output(output: object) -> Path:
    """``output`` as a :class:`~pathlib.Path` when it names a file (a str or a path without a NUL
    byte whose last part is a file name, not ``.``, ``..`` or a trailing separator); else one
    :class:`WarpspeedError` naming it."""
    if not isinstance(output, (str, os.PathLike)):
        raise WarpspeedError(f"study: output must be a file path (a string), got {type(output).__name__} "
                             f"{output!r}")
    text = os.fspath(output)
    if not isinstance(text, str) or not text or "\0" in text:
        raise WarpspeedError(f"study: output {text!r} is not a file path; allowed: a file name such as "
                             "'study.csv' (no NUL byte)")
    last = text.replace(os.sep, "/").rstrip("/").rsplit("/", 1)[-1]
    if text.endswith(("/", os.sep)) or last in ("", ".", ".."):
        raise WarpspeedError(f"study: output {text!r} names a directory, not a file; allowed: a file name such as "
                             "'study.csv'")
    return Path(text)


def _positive_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value > 0


@dataclass(frozen=True)
class StudySpec:
    """A study: the cross product kernels x devices x domains x (blocks of each thread count) x foldings.

    ``domains`` are cells (nx, ny, nz); ``threads`` threads per block; ``foldings`` cells per
    thread; ``output`` the result file; ``format`` one of :data:`FORMATS`; ``models`` the models
    whose columns each row carries (:data:`warpspeed.studies.models.STUDY_MODELS`, stored in that
    order, the roofline always included); ``objective`` the model the best configuration of each
    (kernel, device, domain) is chosen by (None: no ranking).
    """

    kernels: tuple[str, ...]
    devices: tuple[str, ...]
    domains: tuple[Triple, ...]
    threads: tuple[int, ...]
    output: Path
    foldings: tuple[Triple, ...] = PAPER_FOLDINGS
    max_block_z: int = MAX_BLOCK_Z
    format: str = "csv"
    models: tuple[str, ...] = DEFAULT_MODELS
    objective: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "output", check_study_output(self.output))
        object.__setattr__(self, "models", require_models(self.models))
        require_study_objective(self.objective, self.models)
        for name in ("kernels", "devices", "domains", "threads", "foldings"):
            if not getattr(self, name):
                raise WarpspeedError(f"study: '{name}' must be a non-empty list")
        if self.format not in FORMATS:
            raise WarpspeedError(f"study: format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        for t in self.threads:
            if not _positive_int(t) or t & (t - 1) or t > MAX_STUDY_THREADS:
                raise WarpspeedError(f"study: threads per block must be positive powers of two, at most "
                                     f"{MAX_STUDY_THREADS}, got {t!r}")
        for what, triples in (("domains", self.domains), ("foldings", self.foldings)):
            for tr in triples:
                if len(tr) != 3 or not all(_positive_int(v) for v in tr):
                    raise WarpspeedError(f"study: {what} entries must be 3 positive integers (x, y, z), got {tr!r}")
        for domain in self.domains:
            check_domain(domain, "study: domain", WarpspeedError)
        for fold in self.foldings:
            check_fold(fold, "study: folding", WarpspeedError)
        if not _positive_int(self.max_block_z):
            raise WarpspeedError(f"study: max_block_z must be a positive integer, got {self.max_block_z!r}")

    def _configs(self, domain: Triple) -> Iterator[tuple[int, Config]]:
        """(threads, configuration) of one domain in enumeration order, each once."""
        for threads in dict.fromkeys(self.threads):
            for block in block_sizes(threads, self.max_block_z):
                for fold in dict.fromkeys(self.foldings):
                    config = Config(block, fold)
                    if fits_domain(config, domain):
                        yield threads, config

    def iter_points(self) -> Iterator[StudyPoint]:
        """Every row of the study in enumeration order, generated one at a time (memory independent
        of the study's size); a key given twice (a repeated list entry) is generated once, at its
        first place. Configurations a domain cannot use (:func:`warpspeed.launch.space.fits_domain`)
        are left out."""
        for kernel in dict.fromkeys(self.kernels):
            for device in dict.fromkeys(self.devices):
                for domain in dict.fromkeys(self.domains):
                    for threads, config in self._configs(domain):
                        yield StudyPoint(kernel, device, domain, threads, config)

    def points(self) -> list[StudyPoint]:
        """:meth:`iter_points` as a list."""
        return list(self.iter_points())

    def count_points(self) -> int:
        """How many rows :meth:`iter_points` generates, counted without generating them (the
        configurations of each domain times the kernels and devices)."""
        per_pair = sum(1 for domain in dict.fromkeys(self.domains) for _ in self._configs(domain))
        return len(dict.fromkeys(self.kernels)) * len(dict.fromkeys(self.devices)) * per_pair

    @property
    def columns(self) -> tuple[str, ...]:
        """The output's columns (:func:`warpspeed.studies.models.study_columns` of the models)."""
        return study_columns(self.models)

    @property
    def journal_path(self) -> Path:
        """Where rows are appended as they finish while the study runs (``<output>.journal.csv``,
        beside the output, which is written whole when the study completes)."""
        return self.output.with_name(self.output.name + JOURNAL_SUFFIX)


def _str_list(data: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WarpspeedError(f"study: '{name}' must be a list of strings, got {value!r}")
    return tuple(value)


def _triples(data: Mapping[str, Any], name: str, default: Sequence[Triple] | None = None) -> tuple[Triple, ...]:
    value = data.get(name, default)
    if not isinstance(value, (list, tuple)):
        raise WarpspeedError(f"study: '{name}' must be a list of [x, y] or [x, y, z] integer lists, got {value!r}")
    out = []
    for v in value:
        if not isinstance(v, (list, tuple)) or not 2 <= len(v) <= 3:
            raise WarpspeedError(f"study: '{name}' entries must be 2 or 3 integers, got {v!r}")
        out.append(tuple(v) + (1,) * (3 - len(v)))
    return tuple(out)  # type: ignore[return-value]


def study_from_dict(data: Mapping[str, Any], base_dir: str | Path = ".") -> StudySpec:
    """A :class:`StudySpec` from parsed TOML; a relative ``output`` is relative to ``base_dir``."""
    unknown = sorted(set(data) - _SPEC_KEYS)
    if unknown:
        raise WarpspeedError(f"study: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_SPEC_KEYS))}")
    threads = data.get("threads")
    if not isinstance(threads, list):
        raise WarpspeedError(f"study: 'threads' must be a list of integers, got {threads!r}")
    output = data.get("output")
    if not isinstance(output, str) or not output:
        raise WarpspeedError("study: 'output' must be a file name (relative to the working directory)")
    out_path = check_study_output(output)
    if not out_path.is_absolute():
        out_path = Path(base_dir) / out_path
    return StudySpec(
        kernels=_str_list(data, "kernels"), devices=_str_list(data, "devices"),
        domains=_triples(data, "domains"), threads=tuple(threads), output=out_path,
        foldings=_triples(data, "foldings", PAPER_FOLDINGS),
        max_block_z=data.get("max_block_z", MAX_BLOCK_Z), format=data.get("format", format_for(out_path)),
        models=data.get("models", DEFAULT_MODELS), objective=data.get("objective"),
    )


def require_not_study_file(output: Path, study_file: str | Path) -> None:
    """Refuse (one line) an output, or the journal beside it, that is the study file itself."""
    for target in {output, output.with_name(output.name + JOURNAL_SUFFIX)}:
        try:
            same = target.exists() and os.path.samefile(target, study_file)
        except OSError:
            same = False
        if same:
            raise WarpspeedError(f"study: the output {str(target)!r} is the study file itself; "
                                 "allowed: another file name (such as 'study.csv')")


def load_study(path: str | Path) -> StudySpec:
    """Read a study TOML file (see the module docstring for its keys); its output may not be the file itself."""
    p = Path(path)
    spec = study_from_dict(read_toml(p, "study file", WarpspeedError), Path.cwd())
    require_not_study_file(spec.output, p)
    return spec
