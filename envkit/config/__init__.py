"""envkit.yaml: the schema (model), its field types (fields) and the loader (load)."""
