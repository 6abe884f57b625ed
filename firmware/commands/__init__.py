"""One module per ``egm`` subcommand; each exposes ``register(subparsers)``."""
