"""Wave-level DRAM footprints and layer conditions.

Model: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code
Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023, sections 4.4,
4.4.1 and 4.4.2 (cited below as Ernst et al. 2023).

The L2 cache is shared by every thread of the device, so the DRAM traffic is estimated from the
*unique memory footprint of a wave*: the thread blocks that are resident at the same time
(:class:`warpspeed.launch.geometry.Wave`), and from the reuse of data that the blocks launched
just before the wave (the previous-neighbour sets) left in the cache.

Modules, in the order the data flows:

* :mod:`~warpspeed.memory.wave.classes`: the full waves of the grid in classes by the block-plane
  boundaries they cross, with a representative and a weight per class;
* :mod:`~warpspeed.memory.wave.geometry`: a wave and its previous-neighbour sets as boxes of
  cells (as lists of boxes, or as arrays for many waves at once);
* :mod:`~warpspeed.memory.wave.isl_counts`: exact line counts with implicit integer sets (ISL),
  for any access;
* :mod:`~warpspeed.memory.wave.box_counts` (with :mod:`~warpspeed.memory.wave.boxmaps`,
  :mod:`~warpspeed.memory.wave.box_union` and :mod:`~warpspeed.memory.wave.box_sums`): the same
  counts as box unions, for box-preserving accesses (stencils, LBM streaming), 5-20x faster; as
  sums of box sizes where a field's maps never overlap;
* :mod:`~warpspeed.memory.wave.volumes`: the result types; counts -> bytes per lattice update,
  layer volumes and oversubscription factors;
* :mod:`~warpspeed.memory.wave.wave_model`: :class:`WaveModel`, which picks the counter per field;
* :mod:`~warpspeed.memory.wave.average`: the classes' volumes with their weights and averages
  over the grid;
* :mod:`~warpspeed.memory.wave.exact`: the full waves in classes of provably equal counts, for
  the exact average over every full wave (``WaveModel.grid_volumes(..., exact=True)``; one
  evaluation per distinct wave, so not the default of the predictor).
"""

from warpspeed.memory.wave.average import AveragedFieldVolumes, GridWaveVolumes, WaveClassVolumes, weighted_mean
from warpspeed.memory.wave.classes import WaveClass, wave_classes
from warpspeed.memory.wave.exact import exact_wave_classes
from warpspeed.memory.wave.geometry import DIMENSIONS, PerDim
from warpspeed.memory.wave.wave_model import ADDRESS_SPACES, AddressSpace, WaveModel, wave_volumes
from warpspeed.memory.wave.volumes import FieldLineCounts, FieldWaveVolumes, WaveVolumes

__all__ = [
    "ADDRESS_SPACES", "AddressSpace", "AveragedFieldVolumes", "DIMENSIONS", "FieldLineCounts",
    "FieldWaveVolumes", "GridWaveVolumes", "PerDim", "WaveClass", "WaveClassVolumes", "WaveModel",
    "WaveVolumes", "exact_wave_classes", "wave_classes", "wave_volumes", "weighted_mean",
]
