"""Tests of the repository as a whole: architecture, packaging, docs' commands, examples, GPU scripts, imports, bad input, pinned rankings."""
