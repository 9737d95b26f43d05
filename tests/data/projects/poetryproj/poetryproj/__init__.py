SAYS = "poetryproj from the workspace"
