"""Instructions from SASS: compile with nvcc, disassemble with cuobjdump, parse, cache."""
