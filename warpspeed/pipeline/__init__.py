"""The pipeline model: an instruction dependence graph simulated block by block on the SMs."""
