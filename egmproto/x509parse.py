"""Reading untrusted X.509 certificates and CRLs whole, so that damage is a refusal, not a crash.

``cryptography`` parses a certificate's names and extensions lazily: a certificate that loads can
still raise on first use, and not always a ``ValueError`` (``InvalidVersion``, ``DuplicateExtension``
and ``UnsupportedGeneralNameType`` are not). Every place that reads a certificate or CRL from outside
(a package, an envelope, a TLS peer, a PKI file) loads it through :func:`certificate` /
:func:`crl`, which read every lazily parsed part at once, and catches :data:`PARSE_ERRORS`.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm

#: What parsing a damaged certificate or CRL can raise (found by byte-change fuzzing of packages).
PARSE_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    TypeError,
    UnicodeError,
    UnsupportedAlgorithm,
    x509.InvalidVersion,
    x509.DuplicateExtension,
    x509.UnsupportedGeneralNameType,
)


def certificate(data: bytes) -> x509.Certificate:
    """A PEM or DER certificate, every lazily parsed part read (raises one of PARSE_ERRORS)."""
    cert = (x509.load_pem_x509_certificate(data) if data.lstrip().startswith(b"-----")
            else x509.load_der_x509_certificate(data))
    _ = (cert.subject.rfc4514_string(), cert.issuer.rfc4514_string(), list(cert.extensions),
         cert.not_valid_before_utc, cert.not_valid_after_utc, cert.serial_number)
    cert.public_key()
    return cert


def crl(data: bytes) -> x509.CertificateRevocationList:
    """A PEM or DER CRL, every lazily parsed part read (raises one of PARSE_ERRORS)."""
    revocations = (x509.load_pem_x509_crl(data) if data.lstrip().startswith(b"-----")
                   else x509.load_der_x509_crl(data))
    _ = (revocations.issuer.rfc4514_string(), list(revocations.extensions),
         [(entry.serial_number, list(entry.extensions)) for entry in revocations])
    return revocations
