"""The service menu's parts, one job each; the menu (``firmware.ui.service.menu``) sends each
:class:`~firmware.ui.service.actions.ServiceAction` to the part that handles it (each part's
``handlers()``), and every part works on the shared :class:`~firmware.ui.service.context.MenuContext`.

* ``login.Login``: choosing a role, sending the PIN, logging out;
* ``keypad.Keypad``: the PIN and seed pads (digits typed, erased, sent);
* ``config.ConfigEditor``: a game option chosen, edited and applied;
* ``software.SoftwareHash``: the lab hash, with a seed typed for the hmac algorithms;
* ``commands.PageCommands``: the one-request buttons (device tests, handpay, clear tilt, demo);
* ``ram_clear.RamClear``: a reason chosen, the RAM clear confirmed;
* ``packages.Packages``: a waiting game package approved or rejected;
* ``calibration.CalibrationFlow``: the touch calibration (raw touches, commit, cancel, time-out).
"""
