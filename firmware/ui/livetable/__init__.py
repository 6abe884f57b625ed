"""A live table's screens (issue 24): a station's table view and the dealer's screen.

Both draw one JSON *snapshot* of the table (the controller's ``snapshot()``, docs/ui.md "A live
table"): :mod:`.model` turns it into plain view models, :mod:`.pool` the war pool's contest among
the players' tied hands (seed 000 FIGS. 9-14), :mod:`.draw` draws what both screens share (the
seats around the table, the dealer's cards, the pool), :mod:`.station` is a station's table view
(the app picks it when the terminal's status has a ``"table"`` entry) and :mod:`.dealer` the
dealer's touch screen (:func:`~firmware.ui.livetable.dealer.run_dealer_screen`). Nothing here
imports the table controller or its link: the dealer's actions are any object with the four
operator methods.
"""
