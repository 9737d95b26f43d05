"""system.mirrors' probe, in the environment's Python: prints the index pip uses there
(PIP_INDEX_URL, else pip's configuration, else PyPI). Run as `python -c` on this file's text
(core/location.py's program_text), so it needs nothing of the checks package."""

import os

if __name__ == "__main__":
    from pip._internal.configuration import Configuration

    c = Configuration(isolated=False)
    c.load()
    items = dict(c.items())
    print(
        os.environ.get("PIP_INDEX_URL")
        or items.get("global.index-url")
        or items.get(":env:.index-url")
        or "https://pypi.org/simple"
    )
