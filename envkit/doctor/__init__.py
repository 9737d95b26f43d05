"""`envkit doctor`'s knowledge of the host: its facts gathered once into a frozen record (facts),
then judged by pure checks (findings), before anything is built.

May import: services, engine, plan, config, catalog, addresses, platforms, processes, errors."""
