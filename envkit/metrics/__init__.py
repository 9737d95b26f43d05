"""`envkit metrics`: what envkit knows, where operators look. The latest verify and health run of
every target (from the history store), the GPU hardware counters those runs read (named as
dcgm-exporter names them where the meaning is the same), and each member container's state and
GPU use (what `envkit status --json` has), in Prometheus' text exposition or OpenMetrics: printed,
written for node_exporter's textfile collector, or served over HTTP; the alert rules and the
Grafana dashboard generated from the same catalogue.

May import: services, history, config, checks, files, addresses, processes, errors."""
