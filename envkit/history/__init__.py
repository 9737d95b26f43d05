"""Every verify run kept: the store, comparisons and baselines, and what verify records.

May import: checks, verify, files, errors."""
