"""envkit.yaml: the schema (model), its field types (fields) and the loader (load).

May import: checks, catalog, addresses, durations, files, names, errors."""
