"""Reading the project's own files as they are: requirements files line by line, pyproject.toml and
uv.lock, conda environment files, conda-lock and pixi locks, explicit lists, the build backend of
what is installed editable. Each reader judges every line and says what it kept and why."""
