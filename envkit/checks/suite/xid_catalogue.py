"""NVIDIA's XID catalogue as data: every XID's mnemonic, resolution bucket (the catalogue's
immediate action) and description, and the NVLink-5 decode sheet for XIDs 144-150, read from
xid_catalogue.json beside this module (in the package, or in the checks' zip bundle: pkgutil
reads either). scripts/gen_xid_table.py writes that file from scripts/data/; XIDs past the
catalogue (173-176) carry the driver's own mnemonic (nverror.h) and the bucket "unknown".
Python 3.8 syntax: this runs in old images."""

import json
import pkgutil
from typing import Dict, Optional, Tuple

_DATA = pkgutil.get_data(__package__ or "envkit.checks.suite", "xid_catalogue.json")
if _DATA is None:  # never an empty catalogue: every XID would read as unknown
    raise FileNotFoundError("xid_catalogue.json is missing beside xid_catalogue.py")
_CATALOGUE = json.loads(_DATA)

# xid: (mnemonic, resolution bucket, description)
XIDS: Dict[int, Tuple[str, str, str]] = {
    int(xid): (row[0], row[1], row[2]) for xid, row in _CATALOGUE["xids"].items()
}

# (xid, subcode, IntrInfo mask < R575, mask >= R575, error status, bucket,
#  action-2 mask < R575, action-2 mask >= R575, action 2, severity); '-' is any bit,
#  error statuses () any status
Decode = Tuple[
    int, str, str, str, Tuple[int, ...], str, Optional[str], Optional[str], Optional[str], str
]
NVLINK5_DECODE: Tuple[Decode, ...] = tuple(
    (r[0], r[1], r[2], r[3], tuple(r[4]), r[5], r[6], r[7], r[8], r[9])
    for r in _CATALOGUE["nvlink5_decode"]
)
