"""The one exception hierarchy of warpspeed.

Every error a user can provoke with bad input is a subclass of :class:`WarpspeedError`
whose message says what was wrong and what is allowed.
"""


class WarpspeedError(Exception):
    """Base class of all errors warpspeed raises on bad input."""


class KernelError(WarpspeedError):
    """A kernel description (fields, accesses, expressions) is invalid or outside the model."""


class DeviceError(WarpspeedError):
    """A device file is missing, malformed or inconsistent."""


class LaunchError(WarpspeedError):
    """A launch configuration cannot run on the device (threads, registers, shared memory)."""


class FitError(WarpspeedError):
    """Capacity-curve parameters or the data to fit them on are invalid."""


class UnsupportedKernelError(KernelError):
    """A code generator's kernel uses a construct the model does not cover."""


class FoldingError(KernelError):
    """A kernel cannot be folded by a factor on its domain: the factor does not divide the iteration
    extent along its axis. A configuration space leaves such a folding out and says why."""


class CacheWarning(UserWarning):
    """The disk cache cannot be used (its directory cannot be made or written): warpspeed runs
    without it, recomputing what it would have read."""
