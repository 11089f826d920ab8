"""Tests of pystencils_plugin: the catalog, extraction, folding, launch, precision, registers, caches."""
