"""Field update with A/B slots and rollback (issue 28, ``docs/update.md``).

A signed RAUC bundle (:mod:`.bundle`) is checked, then written into the inactive slot of an A/B pair
(:mod:`.install`); the next boot tries it once or a few times (:mod:`.boot`, the boot counter of
RAUC's bootloader backends); the terminal commits it when it reaches attract with its self-tests
passed, and the boot step falls back to the old slot otherwise. The slots' states move only along
:data:`.machine.TRANSITIONS`; what happened is kept as events for critical memory (:mod:`.journal`).
That is the ``directory`` backend (evaluation, tests); on a cabinet the ``rauc`` backend
(:mod:`.rauc_flow`) runs the same flow on RAUC's A/B partitions and GRUB's boot counter, telling
RAUC good or bad. :mod:`.backend` puts both behind one face (``[update] backend``).
It sits beside ``firmware.cashless`` above the ledger, whose durable-write helper it uses; the
composition root hands it the ledger's ``event``.
"""
