"""system.mirrors' probe, run as `python -c` on this text in the environment's Python: prints the
index pip uses there (PIP_INDEX_URL, else pip's configuration, else PyPI)."""

import os

if __name__ == "__main__":
    try:
        from pip._internal.configuration import Configuration
    except ModuleNotFoundError:  # no pip in this Python: system.NO_PIP
        raise SystemExit(3) from None

    c = Configuration(isolated=False)
    c.load()
    items = dict(c.items())
    index = items.get("global.index-url") or items.get(":env:.index-url")
    print(os.environ.get("PIP_INDEX_URL") or index or "https://pypi.org/simple")
