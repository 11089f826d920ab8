"""Tests of warpspeed.validation: accuracy, measurement campaigns, ncu, refits, public data, real GPU data."""
