"""A dependency by path: a lock holds no hash of it."""
