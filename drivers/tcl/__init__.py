"""TCL ticket printer: codec, voucher layout and barcode, driver."""
