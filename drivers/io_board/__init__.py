"""The I/O board (doors, key switches, button deck, tower light, hard meters) on the product link."""
