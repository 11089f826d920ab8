"""Tests of warpspeed.sass."""
