"""Validation against measurements: the measurement runner, the accuracy report and the refit."""
