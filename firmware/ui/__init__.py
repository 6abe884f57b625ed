"""The player screens on pygame-ce (docs/ui.md).

Importing the package keeps pygame's start-up banner off stdout (``egm screenshot --json`` prints
one JSON document there and nothing else); the drawing modules import pygame after this.
"""

import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
