"""Card sets held as uint64 / int64 arrays: bit counts for the array forms of the rules."""

from __future__ import annotations

import numpy as np

if hasattr(np, "bitwise_count"):
    def popcount(x: np.ndarray) -> np.ndarray:
        """Set bits of each element of a uint64 array."""
        return np.bitwise_count(x).astype(np.int64)
else:  # numpy < 2.0
    _POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)

    def popcount(x: np.ndarray) -> np.ndarray:
        """Set bits of each element of a uint64 array."""
        x = np.ascontiguousarray(x, dtype="<u8")
        return _POP8[x.view(np.uint8).reshape(*x.shape, 8)].sum(-1)
