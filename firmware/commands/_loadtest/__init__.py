"""``egm host loadtest``: a floor of simulated terminals against the real host (docs/loadtest.md).

One module per job: ``floor_pki`` (the throwaway PKI), ``terminal`` (one simulated terminal: its own
certificate, critical memory, :class:`~firmware.hostlink.link.HostLink` and MQTT connection),
``worker`` (a simulator process running many terminals), ``procs`` (the broker, host and simulator
processes), ``check`` (what the host's database must hold afterwards), ``report`` (the table and the
JSON document) and ``run`` (the orchestration).
"""
