"""The Merkle tree of the evidence log (RFC 9162 section 2.1, as RFC 6962 before it).

A leaf is `SHA-256(0x00 || data)`, an interior node `SHA-256(0x01 || left || right)`, and
a tree of n leaves splits at the largest power of two below n. So a checkpoint (size,
root) commits to every record before it: an inclusion proof shows one record is in it,
a consistency proof that a later tree extends it.

Hashes are bytes here. `Frontier` appends leaves one at a time, keeping only the roots
of the complete subtrees (the host's running state); `Tree` answers proofs over leaf
hashes it reads through a callable, using stored complete-subtree nodes when it has them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()
_sha256 = hashlib.sha256


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n: int) -> int:
    """The largest power of two strictly below n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


class Frontier:
    """The roots of the complete subtrees of a tree of `size` leaves, largest first: enough
    to append a leaf and to compute the root. Each append reports the complete nodes it
    made (level, index, hash) so a store may keep them for later proofs."""

    __slots__ = ("size", "nodes")

    def __init__(self, size: int = 0, nodes: Sequence[bytes] = ()) -> None:
        if len(nodes) != bin(size).count("1"):
            raise ValueError(
                f"a frontier of {size} leaves has {bin(size).count('1')} nodes, not {len(nodes)}"
            )
        self.size = size
        self.nodes = list(nodes)

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        made = []
        node, level, index = leaf, 0, self.size
        while index & 1:  # the left sibling is complete: merge up
            node = node_hash(self.nodes.pop(), node)
            level, index = level + 1, index >> 1
            made.append((level, index, node))
        self.nodes.append(node)
        self.size += 1
        return made

    def push(self, leaf: bytes) -> None:
        """`append` without reporting the nodes it makes, for a check that needs only the
        roots (the audit pushes every leaf of the log: a call and a list fewer a leaf)."""
        nodes, node, index = self.nodes, leaf, self.size
        while index & 1:
            node = _sha256(b"\x01" + nodes.pop() + node).digest()
            index >>= 1
        nodes.append(node)
        self.size += 1

    def extend(self, leaves: Iterable[bytes]) -> None:
        for leaf in leaves:
            self.push(leaf)

    def root(self) -> bytes:
        if not self.nodes:
            return EMPTY_ROOT
        root = self.nodes[-1]
        for node in reversed(self.nodes[:-1]):
            root = node_hash(node, root)
        return root


def frontier_positions(size: int) -> list[tuple[int, int]]:
    """(level, index) of the roots of the complete subtrees of a tree of `size` leaves,
    largest first: the nodes a `Frontier` of that size holds (level 0 is a leaf). A store
    that keeps its complete nodes can rebuild the frontier at any earlier size from them,
    and a signed root of that size then proves the rebuilt frontier authentic.

    >>> frontier_positions(6)
    [(2, 0), (1, 2)]
    """
    positions, start = [], 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            positions.append((level, start >> level))
            start += 1 << level
    return positions


def root_of(leaves: Sequence[bytes]) -> bytes:
    frontier = Frontier()
    frontier.extend(leaves)
    return frontier.root()


NodeLookup = Callable[[int, int], "bytes | None"]  # (level, index) -> a stored complete node


class Tree:
    """Proofs over the first leaves of a log: `leaves(lo, hi)` returns leaf hashes lo..hi-1;
    `node(level, index)`, when given, returns the stored root of a complete subtree (or
    None), so a proof reads O(log n) nodes instead of hashing every leaf."""

    def __init__(
        self, leaves: Callable[[int, int], Sequence[bytes]], node: NodeLookup | None = None
    ) -> None:
        self._leaves = leaves
        self._node = node

    def hash(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi])."""
        n = hi - lo
        if n <= 0:
            return EMPTY_ROOT
        if n == 1:
            return self._leaves(lo, hi)[0]
        if self._node is not None and n & (n - 1) == 0 and lo % n == 0:
            stored = self._node(n.bit_length() - 1, lo // n)
            if stored is not None:
                return stored
            return root_of(self._leaves(lo, hi))
        if self._node is None:
            return root_of(self._leaves(lo, hi))
        k = split(n)
        return node_hash(self.hash(lo, lo + k), self.hash(lo + k, hi))

    def inclusion(self, index: int, size: int) -> list[bytes]:
        """PATH(index, D[0:size]), RFC 9162 2.1.3.1."""
        if not 0 <= index < size:
            raise ValueError(f"leaf {index} is not in a tree of {size}")
        return self._path(index, 0, size)

    def _path(self, m: int, lo: int, hi: int) -> list[bytes]:
        n = hi - lo
        if n == 1:
            return []
        k = split(n)
        if m < k:
            return self._path(m, lo, lo + k) + [self.hash(lo + k, hi)]
        return self._path(m - k, lo + k, hi) + [self.hash(lo, lo + k)]

    def consistency(self, old: int, new: int) -> list[bytes]:
        """PROOF(old, D[0:new]), RFC 9162 2.1.4.1."""
        if not 0 < old <= new:
            raise ValueError(f"no consistency proof from {old} to {new}")
        return self._subproof(old, 0, new, True)

    def _subproof(self, m: int, lo: int, hi: int, whole: bool) -> list[bytes]:
        n = hi - lo
        if m == n:
            return [] if whole else [self.hash(lo, hi)]
        k = split(n)
        if m <= k:
            return self._subproof(m, lo, lo + k, whole) + [self.hash(lo + k, hi)]
        return self._subproof(m - k, lo + k, hi, False) + [self.hash(lo, lo + k)]


def verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 2.1.3.2."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, path: Sequence[bytes]
) -> bool:
    """RFC 9162 2.1.4.2 (a tree is consistent with itself by an empty proof)."""
    if old == new:
        return not path and old_root == new_root
    if not 0 < old < new or not path:
        return False
    path = list(path)
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == old_root and sr == new_root and sn == 0
