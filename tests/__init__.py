"""warpspeed's tests, by area: one folder per subpackage of ``warpspeed/`` (``memory/`` with its
``wave/`` and ``capacity/``), ``plugin/`` for ``pystencils_plugin``, ``project/`` for the repository
as a whole, and the tests of warpspeed's top-level modules (predict, rank, compare, ...) here.

Every folder is a package, so that two test modules of one name in two folders stay distinct
modules (``tests.memory.test_x``, ``tests.plugin.test_x``) under pytest's default import mode.
``paths.py`` defines the repository root once; ``conftest.py`` holds the shared fixtures.
"""
