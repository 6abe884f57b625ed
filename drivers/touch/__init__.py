"""Touchscreen drivers: Linux evdev multitouch and 3M MicroTouch serial (Format Tablet)."""
