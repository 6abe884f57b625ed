"""One abstract, typed interface per device class (python-can's ``BusABC`` idea).

Each interface is a :class:`~hal.base.Device` (the lifecycle every backend shares) that declares
what the cabinet may ask of that class of device and which events it emits: a backend subclasses
it and fills in its abstract members; a member only some backends have is given a default here, so
the firmware calls it on any backend without probing.

=================  ==========================================  ==================================
device class       interface                                   backends (``hal.registry``)
=================  ==========================================  ==================================
``bill_validator`` :class:`~hal.devices.bill_validator.BillValidator`  ID-003, SSP
``printer``        :class:`~hal.devices.printer.TicketPrinter`         TCL
``shoe``           :class:`~hal.devices.shoe.CardShoe`                 the product-link shoe
``touch``          :class:`~hal.devices.touch.Touchscreen`             evdev, MicroTouch
``io``             :class:`~hal.devices.io_board.IoBoard`              the product-link I/O board
=================  ==========================================  ==================================
"""
