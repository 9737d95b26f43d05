"""Reports of verification results: a readable table, JSON, JUnit XML."""
