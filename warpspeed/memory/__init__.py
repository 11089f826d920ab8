"""The memory model: L1 wavefronts, block footprints, wave volumes and layer conditions,
capacity curves and the DRAM volume (sections 4.2-4.5 of Ernst et al., JPDC 2023)."""
