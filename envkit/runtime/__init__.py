"""Programs envkit ships into the image as they are (checked by ruff and mypy like the rest of
envkit, and parsed as Python 3.8 by a test): the build context carries each file unchanged, and
what differs per environment is data rendered beside it.

May import: nothing of envkit; the standard library only, since its programs run inside images
(conda_tool.py also py-rattler and ruamel.yaml, which its own venv in the image carries).
"""
