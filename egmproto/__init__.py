"""The host link's protocol, shared by the terminal (``firmware.hostlink``) and the reference host
(``host``) and owned by neither: the envelope (seal/open), its errors, the identities (terminal and
host certificates, the casino PKI), the message kinds and their body checks, the MQTT topics and
client, the TLS helpers and the game-package format (docs/architecture.md, docs/hostlink.md).

It imports nothing of the terminal or the host; both import it. Its errors derive from
:class:`egmproto.errors.EgmError`, the root of the product's error hierarchy.
"""
