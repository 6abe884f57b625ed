"""The terminal's own software: pure game logic at the bottom, I/O at the edges."""

__version__ = "0.1.0"
