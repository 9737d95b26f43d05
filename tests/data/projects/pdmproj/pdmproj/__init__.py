SAYS = "pdmproj from the workspace"
