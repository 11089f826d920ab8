"""Tests of warpspeed.pipeline: the pipeline model and its simulation."""
