"""Touchscreen drivers: Linux evdev multitouch (3M MicroTouch serial: not built yet)."""
