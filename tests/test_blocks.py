"""RowBlocks: segments' vectors used as one matrix without being joined."""

import numpy as np
import pytest

from assistant.index.blocks import RowBlocks


def _pair() -> tuple[RowBlocks, np.ndarray]:
    rng = np.random.default_rng(0)
    parts = [rng.standard_normal((n, 4)).astype(np.float32) for n in (3, 0, 5, 2)]
    return RowBlocks(parts), np.concatenate(parts)


def test_row_blocks_answer_like_the_joined_matrix() -> None:
    blocks, whole = _pair()
    v = np.arange(4, dtype=np.float32)
    assert len(blocks) == 10 and blocks.shape == (10, 4)
    assert np.allclose(blocks @ v, whole @ v)
    assert np.array_equal(np.asarray(blocks), whole) and np.array_equal(blocks.copy(), whole)
    for key in ([9, 0, 4, 3, 2], np.array([7, 7, 1]), slice(2, 9, 3), whole[:, 0] > 0, [-1]):
        assert np.array_equal(blocks[key], whole[key])
    assert np.array_equal(blocks[5], whole[5]) and blocks[-1, 2] == whole[-1, 2]
    assert np.array_equal(blocks[:, 0], whole[:, 0])
    assert blocks[[]].shape == (0, 4)
    with pytest.raises(IndexError):
        blocks[[10]]


def test_a_changed_matrix_is_new_and_the_old_one_is_untouched() -> None:
    blocks, whole = _pair()
    changed = blocks.with_rows([4, 0], np.full((2, 4), 9, dtype=np.float32)).appended(np.ones((1, 4)))
    expected = whole.copy()
    expected[[4, 0]] = 9
    assert np.array_equal(np.asarray(changed), np.vstack([expected, np.ones((1, 4))]))
    assert np.array_equal(np.asarray(blocks), whole)
    assert changed.blocks[-2] is blocks.blocks[-1]  # an untouched block is shared, not copied
    fewer = blocks.without(np.array([9, 0]))
    assert np.array_equal(np.asarray(fewer), whole[1:9])
    assert fewer.blocks[1] is blocks.blocks[1]  # the block without removals is shared
    assert blocks.without(np.array([], dtype=np.int64)) is blocks


def test_a_scan_of_ascending_rows_over_blocks_scores_exactly_those_rows() -> None:
    from assistant.search.retrieve import scan

    blocks, whole = _pair()
    v = np.ones(4, dtype=np.float32)
    for rows in (np.array([0, 2, 3, 8, 9]), np.array([5]), np.arange(10), np.array([], dtype=np.int64)):
        assert np.allclose(scan(blocks, rows, v), whole[rows] @ v)
