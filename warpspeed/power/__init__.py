"""The power model: board power, energy per lattice update, clock scaling."""
