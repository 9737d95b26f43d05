"""`envkit compat refresh`: the table's release rows rebuilt from the published sources.

fetch reads them (live, or from a recording), readings turns each answer into facts, merge joins
the facts with the hand-kept ones (driver minimums) into the new table and its diff."""
