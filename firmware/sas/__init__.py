"""The gaming machine's side of SAS 6.02 above the codec (``drivers/sas``): the SAS meters read
from critical memory, the exception queue kept in the ledger and the sans-I/O responder
(docs/protocols/sas.md)."""
