"""Known-answer tests of the DRBG mechanisms from a JSON vector file.

The product carries its own vectors (:data:`BUILTIN_FILES`, ``firmware/rng/vectors/``), each file
with its source line: the 22 NIST CAVP HMAC_DRBG ``[SHA-256] [PredictionResistance = False]``
vectors of the project's reference folder (:data:`BUILTIN_VECTORS`), and 28 NIST CAVP CTR_DRBG
``[AES-256 use df] [PredictionResistance = False]`` vectors, "no reseed" and "with reseed" groups
(``ctr_drbg_aes256.json``). File format::

    {"source": "...", "procedure": "...", "mechanism": "hmac-drbg" | "ctr-drbg",
     "vectors": [{"name": "0", "entropy": HEX, "nonce": HEX, "pers": HEX | null,
                  "add": [HEX | null, HEX | null], "expected": HEX,
                  "entropy_reseed": HEX, "add_reseed": HEX | null}, ...]}

``null`` (or an empty string) means an empty input. ``mechanism`` is optional: a file without it
holds HMAC_DRBG vectors (the format's first version). ``entropy_reseed`` and ``add_reseed`` are
optional (the CAVP vectors "with reseed"). Procedure, for each vector, with the file's mechanism:

1. ``instantiate(entropy, nonce, pers)``;
2. if ``entropy_reseed`` is present: ``reseed(entropy_reseed, add_reseed)``;
3. ``generate(len(expected), add[0])`` and discard (128 bytes in the CAVP HMAC_DRBG SHA-256
   files, 64 in the CTR_DRBG AES-256 ones);
4. ``generate(len(expected), add[1])`` must equal ``expected``.

A file that cannot be read, is not JSON, or lacks a key or holds a non-hex value raises
:class:`~firmware.rng.errors.KatFileError` naming the vector and the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

from firmware.rng.errors import DrbgError, KatFileError
from firmware.rng.mechanisms import DEFAULT_MECHANISM, MECHANISMS, mechanism

_VECTORS: Traversable = resources.files("firmware.rng") / "vectors"
#: The HMAC_DRBG vectors built into the product.
BUILTIN_VECTORS: Traversable = _VECTORS / "hmac_drbg_sha256.json"
#: The built-in vector file of each mechanism (``egm rng kat`` with no file runs them all).
BUILTIN_FILES: dict[str, Traversable] = {
    "hmac-drbg": BUILTIN_VECTORS,
    "ctr-drbg": _VECTORS / "ctr_drbg_aes256.json",
}


@dataclass(frozen=True)
class KatVector:
    """One DRBG known-answer vector, decoded (``mechanism`` names the DRBG it is for)."""

    name: str
    entropy: bytes
    nonce: bytes
    personalization: bytes
    additional_input: tuple[bytes, bytes]
    expected: bytes
    entropy_reseed: bytes | None = None
    additional_input_reseed: bytes = b""
    mechanism: str = DEFAULT_MECHANISM


@dataclass(frozen=True)
class KatResult:
    """The outcome of one vector: what was expected and what the DRBG returned."""

    name: str
    expected: bytes
    returned: bytes
    mechanism: str = DEFAULT_MECHANISM

    @property
    def passed(self) -> bool:
        return self.returned == self.expected


def _hex(entry: dict[str, Any], key: str, name: str) -> bytes:
    """``entry[key]`` decoded from hex; null and "" are empty; a missing key is an error."""
    if key not in entry:
        raise KatFileError(f"vector {name!r}: missing key {key!r}")
    return _decode(entry[key], key, name)


def _decode(value: Any, key: str, name: str) -> bytes:
    """One hex value of vector ``name``; ``None`` is empty."""
    if value is None:
        return b""
    if not isinstance(value, str):
        raise KatFileError(f"vector {name!r}: key {key!r} is not a hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise KatFileError(f"vector {name!r}: key {key!r} is not valid hex") from None


def parse_vectors(document: Any) -> list[KatVector]:
    """Decode the ``vectors`` of a parsed vector file."""
    if not isinstance(document, dict) or not isinstance(document.get("vectors"), list):
        raise KatFileError("the file has no 'vectors' list")
    if not document["vectors"]:
        raise KatFileError("the 'vectors' list is empty: nothing to test")
    declared = document.get("mechanism", DEFAULT_MECHANISM)
    if declared not in MECHANISMS:
        raise KatFileError(f"unknown 'mechanism' {declared!r}: choose {' or '.join(MECHANISMS)}")
    vectors = []
    for index, entry in enumerate(document["vectors"]):
        if not isinstance(entry, dict):
            raise KatFileError(f"vector #{index}: not an object")
        name = str(entry.get("name", f"#{index}"))
        if "add" not in entry:
            raise KatFileError(f"vector {name!r}: missing key 'add'")
        add = entry["add"]
        if not isinstance(add, list) or len(add) != 2:
            raise KatFileError(f"vector {name!r}: key 'add' is not a list of two inputs")
        expected = _hex(entry, "expected", name)
        if not expected:
            raise KatFileError(f"vector {name!r}: key 'expected' is empty")
        vectors.append(
            KatVector(
                name=name,
                entropy=_hex(entry, "entropy", name),
                nonce=_hex(entry, "nonce", name),
                personalization=_hex(entry, "pers", name),
                additional_input=(_decode(add[0], "add", name), _decode(add[1], "add", name)),
                expected=expected,
                entropy_reseed=(
                    _decode(entry["entropy_reseed"], "entropy_reseed", name)
                    if "entropy_reseed" in entry
                    else None
                ),
                additional_input_reseed=_decode(entry.get("add_reseed"), "add_reseed", name),
                mechanism=declared,
            )
        )
    return vectors


def load_vectors(path: str | Path | Traversable = BUILTIN_VECTORS) -> list[KatVector]:
    """Read and decode a vector file (the built-in vectors by default)."""
    try:
        text = (Path(path) if isinstance(path, str) else path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KatFileError(f"{path}: cannot read the vector file: {exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KatFileError(f"{path}: not a JSON document: {exc}") from None
    try:
        return parse_vectors(document)
    except KatFileError as exc:
        raise KatFileError(f"{path}: {exc}") from None


def run_vector(vector: KatVector) -> KatResult:
    """Run the procedure of the module docstring on one vector."""
    try:
        drbg = mechanism(vector.mechanism).factory(vector.entropy, vector.nonce, vector.personalization)
        if vector.entropy_reseed is not None:
            drbg.reseed(vector.entropy_reseed, vector.additional_input_reseed)
        drbg.generate(len(vector.expected), vector.additional_input[0])
        returned = drbg.generate(len(vector.expected), vector.additional_input[1])
    except DrbgError as exc:
        raise KatFileError(f"vector {vector.name!r}: the DRBG refused its inputs: {exc}") from None
    return KatResult(vector.name, vector.expected, returned, vector.mechanism)


def run_file(path: str | Path | Traversable = BUILTIN_VECTORS) -> list[KatResult]:
    """Load a vector file (the built-in HMAC_DRBG vectors by default) and run every vector, in order."""
    return [run_vector(vector) for vector in load_vectors(path)]


def run_builtin(mechanisms: tuple[str, ...] = tuple(BUILTIN_FILES)) -> list[KatResult]:
    """Run the built-in vectors of ``mechanisms`` (all by default), mechanism by mechanism."""
    return [result for name in mechanisms for result in run_file(BUILTIN_FILES[name])]
