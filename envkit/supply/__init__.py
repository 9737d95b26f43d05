"""What is in the team's image and who built it: the SBOM from the lock (CycloneDX, SPDX), the
provenance, cosign's signatures on the pushed digest, and syft's scan to hold the SBOM against.

May import: checks, plan, errors."""
