"""Signed notes and checkpoints in the C2SP formats, byte for byte as Go's reference
implementation (golang.org/x/mod/sumdb/note) writes them, and refused when changed."""

from __future__ import annotations

import pytest

from gmtool.evidence.note import (
    Checkpoint,
    NoteError,
    Signer,
    Verifier,
    open_checkpoint,
    open_note,
    sign,
    sign_checkpoint,
)

# The example key and note of the Go package's documentation.
GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
GO_NOTE = GO_TEXT + (
    "\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGU"
    "gYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)


def test_keys_and_signature_are_the_go_reference_ones() -> None:
    signer = Signer.parse(GO_SIGNER)
    assert signer.text() == GO_SIGNER
    assert signer.verifier.text() == GO_VERIFIER
    assert sign(GO_TEXT, signer) == GO_NOTE
    text, good = open_note(GO_NOTE, [Verifier.parse(GO_VERIFIER)])
    assert text == GO_TEXT and [v.name for v in good] == ["PeterNeumann"]


@pytest.mark.parametrize(
    "change",
    [
        lambda n: n.replace("cryptography", "cryptographY"),
        lambda n: n.replace("x08go", "x08gp"),
        lambda n: n.replace("\n\n", "\n \n"),
        lambda n: n[:-1],
        lambda n: n.replace("PeterNeumann", "PaulNeumann"),
    ],
)
def test_a_changed_note_does_not_open(change) -> None:
    with pytest.raises(NoteError):
        open_note(change(GO_NOTE), [Verifier.parse(GO_VERIFIER)])


def test_a_note_signed_by_another_key_does_not_open() -> None:
    other = Signer.generate("PeterNeumann")
    with pytest.raises(NoteError, match="not signed by a known key|does not verify"):
        open_note(sign(GO_TEXT, other), [Verifier.parse(GO_VERIFIER)])


@pytest.mark.parametrize(
    "key",
    [
        "",
        "PeterNeumann+c74f20a3",
        "Peter+Neumann+c74f20a3+AA==",
        "PeterNeumann+00000000+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3+not base64",
    ],
)
def test_malformed_verifier_keys_are_refused(key: str) -> None:
    with pytest.raises(NoteError):
        Verifier.parse(key)


def test_a_checkpoint_round_trips_and_keeps_its_extension_lines() -> None:
    signer = Signer.generate("gmtool/0123456789abcdef")
    checkpoint = Checkpoint(
        "gmtool/0123456789abcdef", 42, bytes(range(32)), ("time 2026-12-01T00:00:00Z",)
    )
    note = sign_checkpoint(checkpoint, signer)
    assert note.startswith(
        "gmtool/0123456789abcdef\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBka"
        "GxwdHh8=\ntime 2026-12-01T00:00:00Z\n\n\u2014 gmtool/"
    )
    assert open_checkpoint(note, [signer.verifier]) == checkpoint


@pytest.mark.parametrize(
    "text",
    [
        "origin\n-1\nAAAA\n",
        "origin\n01\n" + "A" * 43 + "=\n",
        "origin\n1\nAAAA\n",
        "origin\n1\n",
        "\n1\n" + "A" * 43 + "=\n",
    ],
)
def test_malformed_checkpoints_are_refused(text: str) -> None:
    with pytest.raises(NoteError):
        Checkpoint.parse(text)
