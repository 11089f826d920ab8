"""Performance models that turn volumes and cycles into time: the roofline."""
