"""The AMALI interval model: cycles as a CPI stack of stall reasons."""
