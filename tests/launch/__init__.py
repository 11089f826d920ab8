"""Tests of warpspeed.launch: launch geometry, the ranked space, folded spaces, default threads."""
