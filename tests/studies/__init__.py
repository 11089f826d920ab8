"""Tests of warpspeed.studies: studies, their models, scans, folding predictors."""
