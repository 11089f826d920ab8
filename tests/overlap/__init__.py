"""Tests of warpspeed.overlap: the overlap model and its fit."""
