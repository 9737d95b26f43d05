"""One folder that carries a verified environment across an air gap: the image (for engines)
and its root file system (for Charliecloud, enroot, Apptainer), the packages its lock names,
the lock, the SBOM and a manifest checked before anything in it is used.

May import: supply, lock, checks, plan, files, errors."""
