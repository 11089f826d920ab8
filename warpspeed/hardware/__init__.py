"""The device database: the device schema, its loader and the built-in device files."""

from warpspeed.hardware.device import Device, all_devices, device_names, load_device

__all__ = ["Device", "all_devices", "device_names", "load_device"]
