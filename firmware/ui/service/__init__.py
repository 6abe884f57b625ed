"""The service menu's screens on the core of ``firmware.ui`` (docs/ui-service.md).

Login by role with a PIN pad, a menu of what the role may do (the service API's permission table),
meters, game recall drawn with its cards, bill and ticket histories, the event log, diagnostics
with device tests, configuration, RAM clear, software verification, game packages, and the
touchscreen's three-target calibration. Every request goes through the terminal's service API
(``firmware.cabinet.service``), which checks the role and the cabinet state and logs it.

* ``menu.ServiceMenu``: the controller (touches in, each action to its part, the navigation, the
  view drawn); ``context.MenuContext``: the state and the requests on their way;
  ``link.TerminalLink``: the terminal's command queue; ``flows``: the menu's parts, one job each;
* ``app.ServiceApp``: the service menu alone on a terminal, stepped frame by frame;
* ``builders``: the state and the API's answers -> view models; ``screen.ServiceScreen`` draws them;
* ``calibration``: the calibration procedure, its screen, and the ``touch_calibration`` command;
* ``screenshots.render``: ``egm screenshot service|recall|calibration`` from ``demo`` states.
"""
