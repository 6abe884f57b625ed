"""Golden-image comparison with a tolerance: small downscaled PNGs in tests/ui/golden/.

``compare(surface, name, tmp_path)`` shrinks the rendered surface to :data:`GOLDEN_SIZE`, and
compares it with ``golden/<name>.png`` by the mean absolute difference of the pixels (0..255). Over
the tolerance the test fails with the figure, and the rendered, the golden and the difference
images are saved beside the test's tmp_path for a look. ``EGM_UPDATE_GOLDEN=1`` rewrites the
goldens instead (review the images before committing them).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pygame

GOLDEN = Path(__file__).resolve().parent / "golden"
GOLDEN_SIZE = (480, 270)
#: Mean absolute difference allowed (of 255): font hinting or a rounding may move a few pixels,
#: a changed layout, colour or text moves far more.
TOLERANCE = 2.0


def _array(surface: pygame.Surface) -> np.ndarray:
    return pygame.surfarray.array3d(surface).astype(np.int16)


def compare(surface: pygame.Surface, name: str, out_dir: Path, tolerance: float = TOLERANCE) -> float:
    small = pygame.transform.smoothscale(surface, GOLDEN_SIZE)
    path = GOLDEN / f"{name}.png"
    if os.environ.get("EGM_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        pygame.image.save(small, str(path))
        return 0.0
    assert path.exists(), f"no golden image {path}; make it with EGM_UPDATE_GOLDEN=1 and review it"
    golden = pygame.image.load(str(path))
    got, want = _array(small), _array(golden)
    assert got.shape == want.shape, f"{name}: rendered {got.shape}, golden {want.shape}"
    diff = np.abs(got - want)
    mad = float(diff.mean())
    if mad > tolerance:
        out_dir.mkdir(parents=True, exist_ok=True)
        pygame.image.save(small, str(out_dir / f"{name}.rendered.png"))
        pygame.image.save(golden, str(out_dir / f"{name}.golden.png"))
        scaled = np.clip(diff * 4, 0, 255).astype(np.uint8)
        pygame.image.save(pygame.surfarray.make_surface(scaled), str(out_dir / f"{name}.diff.png"))
        raise AssertionError(f"{name}: the screen differs from its golden image by {mad:.2f} (mean absolute "
                             f"difference, tolerance {tolerance}); images in {out_dir}")
    return mad
