"""Instruction facts per SM family (TOML files with sources): issue, pipes, latencies, shared datapaths.

Read by :mod:`warpspeed.hardware.instruction_facts`; the interval model, the pipeline model and the
in-core time (:mod:`warpspeed.incore`) take every instruction latency and throughput from here.
"""
