"""Tests of warpspeed.trace."""
