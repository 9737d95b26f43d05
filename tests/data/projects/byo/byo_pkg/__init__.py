"""The BYO project's own package: imported in the box from the mounted workspace."""

GREETING = "hello from the workspace"
