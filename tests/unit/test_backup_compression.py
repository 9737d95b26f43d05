"""A backup's archive is gzip written as independent members compressed on several threads
(services/backups._ParallelGzip): every reader sees one stream, in order, byte for byte."""

from __future__ import annotations

import gzip
import io
import os
import random

from envkit.services.backups import _ParallelGzip


def test_members_compressed_in_parallel_read_back_as_one_stream_in_order() -> None:
    random.seed(3)
    text = b"".join(b"line %d of a module\n" % n for n in range(200_000))
    noise = os.urandom(9 << 20)
    pieces = [text, noise, b"", b"x" * 17, text[:12345]]
    out = io.BytesIO()
    zipped = _ParallelGzip(out.write)
    zipped.MEMBER_BYTES = 1 << 20  # many members, so ordering across threads is exercised
    for piece in pieces:
        start = 0
        while start < len(piece):
            size = random.randint(1000, 300_000)  # noqa: S311 - chunk sizes, not secrets
            zipped.write(piece[start : start + size])
            start += size
    zipped.close()
    assert gzip.decompress(out.getvalue()) == b"".join(pieces)
    members = len(b"".join(pieces)) // (1 << 20)
    assert out.getvalue().count(b"\x1f\x8b\x08") >= members  # a gzip header per member


def test_an_empty_stream_is_still_a_gzip_file() -> None:
    out = io.BytesIO()
    zipped = _ParallelGzip(out.write)
    zipped.close()
    assert gzip.decompress(out.getvalue()) == b""
