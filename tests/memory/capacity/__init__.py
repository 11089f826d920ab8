"""Tests of warpspeed.memory.capacity: the capacity curves and oversubscription."""
