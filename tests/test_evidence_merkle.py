"""The evidence log's Merkle tree against RFC 6962's published vectors, and its proofs as
properties: every inclusion and consistency proof verifies, and a changed one does not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gmtool.evidence.merkle import (
    EMPTY_ROOT,
    Frontier,
    Tree,
    leaf_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

# The Certificate Transparency reference leaves and the roots of their first n.
CT_LEAVES = [
    bytes.fromhex(h)
    for h in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
CT_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
HASHES = [leaf_hash(d) for d in CT_LEAVES]


def _tree(leaves: list[bytes], stored: bool = False) -> Tree:
    nodes: dict[tuple[int, int], bytes] = {}
    if stored:
        frontier = Frontier()
        for leaf in leaves:
            nodes.update({(lv, ix): h for lv, ix, h in frontier.append(leaf)})
    lookup = (lambda level, index: nodes.get((level, index))) if stored else None
    return Tree(lambda lo, hi: leaves[lo:hi], lookup)


def test_roots_are_the_rfc_6962_reference_roots() -> None:
    assert EMPTY_ROOT.hex() == CT_ROOTS[0]
    for n in range(9):
        assert root_of(HASHES[:n]).hex() == CT_ROOTS[n]
        frontier = Frontier()
        frontier.extend(HASHES[:n])
        assert frontier.root().hex() == CT_ROOTS[n]


def test_inclusion_proof_of_the_first_leaf_is_the_reference_path() -> None:
    assert [h.hex() for h in _tree(HASHES).inclusion(0, 8)] == [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]


def test_a_frontier_restored_from_its_nodes_goes_on_as_before() -> None:
    frontier = Frontier()
    frontier.extend(HASHES[:5])
    again = Frontier(frontier.size, frontier.nodes)
    again.extend(HASHES[5:])
    assert again.root().hex() == CT_ROOTS[8]


LEAVES = st.lists(st.binary(max_size=8), min_size=1, max_size=70).map(
    lambda data: [leaf_hash(d + i.to_bytes(2, "big")) for i, d in enumerate(data)]
)


@settings(max_examples=60, deadline=None)
@given(LEAVES, st.data())
def test_every_inclusion_proof_verifies_and_a_changed_one_does_not(leaves, data) -> None:
    n = len(leaves)
    root = root_of(leaves)
    index = data.draw(st.integers(0, n - 1))
    for tree in (_tree(leaves), _tree(leaves, stored=True)):
        path = tree.inclusion(index, n)
        assert verify_inclusion(leaves[index], index, n, path, root)
        assert not verify_inclusion(leaf_hash(b"forged"), index, n, path, root)
        if n > 1:
            assert not verify_inclusion(leaves[index], (index + 1) % n, n, path, root)
        if path:
            bent = [*path[:-1], bytes(32)]
            assert not verify_inclusion(leaves[index], index, n, bent, root)


@settings(max_examples=60, deadline=None)
@given(LEAVES, st.data())
def test_every_consistency_proof_verifies_and_a_rewritten_history_does_not(leaves, data):
    n = len(leaves)
    old = data.draw(st.integers(1, n))
    old_root, new_root = root_of(leaves[:old]), root_of(leaves)
    for tree in (_tree(leaves), _tree(leaves, stored=True)):
        proof = tree.consistency(old, n)
        assert verify_consistency(old, n, old_root, new_root, proof)
        assert not verify_consistency(old, n, leaf_hash(b"other history"), new_root, proof)
        if old < n:
            assert not verify_consistency(old, n, old_root, leaf_hash(b"other"), proof)
    if old < n:  # a history that changed a record before `old` proves nothing
        changed = [leaf_hash(b"rewritten"), *leaves[1:]]
        proof = _tree(changed).consistency(old, n)
        assert not verify_consistency(old, n, old_root, root_of(changed), proof)


@settings(max_examples=40, deadline=None)
@given(LEAVES)
def test_stored_nodes_give_the_same_subtree_hashes(leaves) -> None:
    plain, stored = _tree(leaves), _tree(leaves, stored=True)
    n = len(leaves)
    for lo in range(0, n, 3):
        for hi in range(lo + 1, n + 1, 5):
            assert plain.hash(lo, hi) == stored.hash(lo, hi) == root_of(leaves[lo:hi])
