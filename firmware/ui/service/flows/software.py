"""The software page's lab hash: :class:`SoftwareHash`.

``software hash ALGORITHM [SEED]`` digests the installed software the way a lab checks it. The
plain algorithms are asked at once; an hmac one first opens the seed pad (page ``seed``: hex
digits, an even number of them, or none), and ENTER on it sends the request. The answer is kept
for the software page, which shows the overall digest.
"""

from __future__ import annotations

from firmware.ui.service.actions import Handler
from firmware.ui.service.builders import HASH_ALGORITHMS
from firmware.ui.service.context import MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.text import msg


class SoftwareHash(MenuPart):
    def handlers(self) -> dict[str, Handler]:
        return {"algorithm": self.algorithm}

    def algorithm(self, algorithm: str) -> None:
        s = self.ctx.state
        if algorithm not in HASH_ALGORITHMS or s.busy:
            return
        if str(algorithm).startswith("hmac"):
            s.page, s.algorithm, s.seed = "seed", str(algorithm), ""
            return
        self.ctx.ask(["software", "hash", str(algorithm)], self._hashed)

    def send_seed(self) -> None:
        """The seed typed on the pad (an hmac algorithm chosen)."""
        s = self.ctx.state
        assert s.algorithm is not None
        if len(s.seed) % 2:
            self.ctx.say(msg("service.software.seed_odd"), "alert")
            return
        self.ctx.ask(["software", "hash", s.algorithm] + ([s.seed] if s.seed else []), self._hashed)

    def close_pad(self) -> None:
        """Leave the seed pad: back to the software page."""
        s = self.ctx.state
        s.page, s.seed, s.algorithm = "software", "", None

    def _hashed(self, answer: Answer) -> None:
        self.ctx.state.answers["software_hash"] = answer
        self.close_pad()
        self.ctx.say(msg("service.software.hashed", algorithm=str(answer.get("algorithm", "-"))), "good")
