"""The in-core time: seconds per lattice update that the SM's issue slots, pipes, load/store units,
register reads and exposed dependency latency need for a configuration's instruction mix.

:mod:`warpspeed.incore.mix` counts a thread's instructions per update (from the kernel description);
:mod:`warpspeed.incore.core_time` turns them into cycles per update and SM with the instruction facts
of the device's SM family (:mod:`warpspeed.hardware.instruction_facts`). The predictor adds the
result as one more component (``sm``) beside the memory levels, so every combiner sees it
(``docs/incore.md``).
"""
