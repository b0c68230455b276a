"""Matrices stacked by rows and used as one, without being copied together.

A snapshot's vectors are the vectors of its segments, each a memory-mapped file. Joining
them into one matrix read every vector at start: at a million papers, 10 of a 35 s cold
start, and a second copy of the vectors in memory. `RowBlocks` answers what search and
the catalogue ask of a matrix (`len`, `shape`, `@ vector`, rows by index) block by block.
It is never written into: a change makes a new one that shares the unchanged blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


class RowBlocks:
    """Read-only row blocks (float32, one width) seen as one matrix, row i of block b being
    row `starts[b] + i`."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, blocks: Iterable[np.ndarray], width: int = 0) -> None:
        self.blocks: tuple[np.ndarray, ...] = tuple(b for b in blocks if len(b))
        self.starts = np.cumsum([0, *(len(b) for b in self.blocks)], dtype=np.int64)
        width = self.blocks[0].shape[1] if self.blocks else width
        self.shape: tuple[int, int] = (int(self.starts[-1]), width)

    @classmethod
    def of(cls, matrix: np.ndarray | RowBlocks) -> RowBlocks:
        if isinstance(matrix, RowBlocks):
            return matrix
        matrix = np.asarray(matrix, dtype=np.float32)
        return cls([matrix], matrix.shape[1] if matrix.ndim == 2 else 0)

    def __len__(self) -> int:
        return self.shape[0]

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        if len(self.blocks) == 1:
            return np.asarray(self.blocks[0] @ other)
        if not self.blocks:
            return np.zeros((0, *np.shape(other)[1:]), dtype=np.float32)
        return np.concatenate([np.asarray(b @ other) for b in self.blocks])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if len(self.blocks) == 1:
            matrix = np.asarray(self.blocks[0])
        elif self.blocks:
            matrix = np.concatenate(self.blocks)
        else:
            matrix = np.zeros(self.shape, dtype=np.float32)
        return matrix if dtype is None else matrix.astype(dtype, copy=False)

    def copy(self) -> np.ndarray:
        return np.array(self)

    def __getitem__(self, key: Any) -> np.ndarray:
        rest: tuple[Any, ...] = ()
        if isinstance(key, tuple):
            key, rest = key[0], key[1:]
        if isinstance(key, (int, np.integer)):
            i = int(key) + (len(self) if key < 0 else 0)
            if not 0 <= i < len(self):
                raise IndexError(f"row {key} of {len(self)}")
            b = int(np.searchsorted(self.starts, i, side="right")) - 1
            row = np.asarray(self.blocks[b][i - self.starts[b]])
            return row[rest] if rest else row
        rows = self._rows(key)
        out = self._gather(rows)
        return out[(slice(None), *rest)] if rest else out

    def _rows(self, key: Any) -> np.ndarray:
        if isinstance(key, slice):
            return np.arange(len(self))[key]
        rows = np.asarray(key)
        if rows.dtype == bool:
            if rows.shape != (len(self),):
                raise IndexError(f"a mask of {rows.shape} for {len(self)} rows")
            return np.flatnonzero(rows)
        rows = rows.astype(np.int64, copy=False).ravel()
        rows = np.where(rows < 0, rows + len(self), rows)
        if len(rows) and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"rows out of range for {len(self)} rows")
        return rows

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), self.shape[1]), dtype=np.float32)
        if not len(rows):
            return out
        which = np.searchsorted(self.starts, rows, side="right") - 1
        first, last = int(which.min()), int(which.max())
        if first == last:
            return np.asarray(self.blocks[first][rows - self.starts[first]], dtype=np.float32)
        for b in range(first, last + 1):
            here = which == b
            if here.any():
                out[here] = self.blocks[b][rows[here] - self.starts[b]]
        return out

    def split(self, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Ascending rows as (block, rows within it) pairs, in order: a scan of a filter's rows
        gathers from one block at a time instead of sorting each gather out among them."""
        cuts = np.searchsorted(rows, self.starts)
        return [
            (block, rows[cuts[b] : cuts[b + 1]] - self.starts[b])
            for b, block in enumerate(self.blocks)
            if cuts[b + 1] > cuts[b]
        ]

    # --- new matrices (this one is never changed) --------------------------------------
    def appended(self, more: np.ndarray) -> RowBlocks:
        """These rows, then `more`."""
        return RowBlocks((*self.blocks, np.asarray(more, dtype=np.float32)), self.shape[1])

    def with_rows(self, rows: Sequence[int], values: np.ndarray) -> RowBlocks:
        """Rows `rows` replaced by `values`; only the blocks they fall in are copied."""
        if not len(rows):
            return self
        rows_arr = np.asarray(rows, dtype=np.int64)
        which = np.searchsorted(self.starts, rows_arr, side="right") - 1
        blocks = list(self.blocks)
        for b in np.unique(which):
            here = which == b
            block = np.array(blocks[b], dtype=np.float32)
            block[rows_arr[here] - self.starts[b]] = values[here]
            blocks[b] = block
        return RowBlocks(blocks, self.shape[1])

    def without(self, rows: np.ndarray) -> RowBlocks:
        """These rows removed; only the blocks they fall in are copied (a removal of a few
        papers from a million copied every vector once per removal segment)."""
        rows = np.unique(np.asarray(rows, dtype=np.int64))
        if not len(rows):
            return self
        which = np.searchsorted(self.starts, rows, side="right") - 1
        blocks = list(self.blocks)
        for b in np.unique(which):
            keep = np.ones(len(blocks[b]), dtype=bool)
            keep[rows[which == b] - self.starts[b]] = False
            blocks[b] = np.asarray(blocks[b][keep], dtype=np.float32)
        return RowBlocks(blocks, self.shape[1])
