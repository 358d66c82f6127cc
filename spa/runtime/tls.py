"""The TLS identity of the secure metrics endpoint: a certificate given to us, or one we make.

Why both: a cluster with cert-manager (or its own CA) mounts a Secret with `tls.crt` and
`tls.key`, and scrapers verify it; without one, the endpoint still encrypts with a self-signed
certificate made at start-up, as controller-runtime does, and scrapers skip verification
(`insecureSkipVerify`) while the bearer token still authenticates them. Made with
`cryptography`, the library Python's TLS tooling is built on; nothing is written outside a
private temporary directory, because `ssl` loads keys only from files.
"""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import tempfile
from pathlib import Path

__all__ = ["server_context"]

# A self-signed certificate lives as long as the process; a year is plenty and not forever.
_SELF_SIGNED_DAYS = 365


def server_context(cert_dir: Path | None) -> ssl.SSLContext:
    """A TLS 1.2+ server context from `cert_dir`/tls.crt and tls.key, or self-signed."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_dir is not None:
        context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
        return context
    certificate, key = _self_signed()
    with tempfile.TemporaryDirectory(prefix="spa-tls-") as directory:
        cert_path, key_path = Path(directory, "tls.crt"), Path(directory, "tls.key")
        cert_path.write_bytes(certificate)
        key_path.touch(mode=0o600)
        key_path.write_bytes(key)
        context.load_cert_chain(cert_path, key_path)
    return context


def _self_signed() -> tuple[bytes, bytes]:
    # Imported here, not with the module: the commands that import spa.runtime without serving
    # TLS (`kubectl spa status`) then run without cryptography, which the Krew plugin leaves
    # out (docs/install.md, "kubectl spa with Krew").
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "scheduled-pod-autoscaler")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=_SELF_SIGNED_DAYS))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(socket.gethostname()), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return (
        certificate.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
