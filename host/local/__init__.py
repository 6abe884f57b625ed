"""Local instances of the floor's servers (a NATS JetStream cluster, PostgreSQL) on loopback ports, for
the lab, load tests, benchmarks and the test suite. Nothing here is used by a production host: on a floor
these servers are run by the casino's operations (docs/floor-cluster.md)."""
