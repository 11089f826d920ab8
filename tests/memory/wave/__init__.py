"""Tests of warpspeed.memory.wave: waves, their classes, exact waves, box maps and unions."""
