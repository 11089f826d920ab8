"""Tests of warpspeed.roofline."""
