"""The certificates and keys of a local control plane, made with `cryptography`.

A real cluster authenticates with X.509 client certificates and signs ServiceAccount tokens
with its own key; the tests need the same so that RBAC and TokenRequest behave as in
production. Files are kept across restarts of the same directory (so a `make cluster`
kubeconfig stays valid) and only made when missing.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The first address of --service-cluster-ip-range: the in-cluster "kubernetes" Service.
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
KUBERNETES_SERVICE_IP = "10.0.0.1"
_VALIDITY = datetime.timedelta(days=3650)

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class ClientCert:
    """A client certificate and its key, as files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    """Paths of everything the processes and the kubeconfigs refer to."""

    directory: Path
    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin: ClientCert
    controller_manager: ClientCert
    scheduler: ClientCert
    service_account_key: Path
    service_account_pub: Path


def _write_key(path: Path, key: PrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization is not None:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        # Backdated a little so a clock step right after creation doesn't make it "not yet valid".
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + _VALIDITY)
    )


def _leaf(
    directory: Path,
    stem: str,
    ca_key: ec.EllipticCurvePrivateKey,
    ca_name: x509.Name,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    sans: list[x509.GeneralName] | None = None,
) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _builder(subject, ca_name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key_path, key)
    return cert_path, key_path


def ensure_pki(directory: Path) -> Pki:
    """Create (once) a CA, the apiserver's serving cert, client certs and the SA signing key."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(
        directory=directory,
        ca_cert=directory / "ca.crt",
        ca_key=directory / "ca.key",
        serving_cert=directory / "apiserver.crt",
        serving_key=directory / "apiserver.key",
        admin=ClientCert(directory / "admin.crt", directory / "admin.key"),
        controller_manager=ClientCert(
            directory / "controller-manager.crt", directory / "controller-manager.key"
        ),
        scheduler=ClientCert(directory / "scheduler.crt", directory / "scheduler.key"),
        service_account_key=directory / "sa.key",
        service_account_pub=directory / "sa.pub",
    )
    ca_name = _name("spa-testenv-ca")
    if all(
        p.exists()
        for p in (
            pki.ca_cert,
            pki.serving_cert,
            pki.admin.cert,
            pki.controller_manager.cert,
            pki.service_account_key,
            pki.service_account_pub,
        )
    ):
        if not pki.scheduler.cert.exists():
            # A directory made before the scheduler was part of the plane (`make cluster`
            # keeps its certificates): issue the one missing certificate with the same CA.
            existing = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
            assert isinstance(existing, ec.EllipticCurvePrivateKey)
            _scheduler_cert(directory, existing, ca_name)
        return pki

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pki.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    _write_key(pki.ca_key, ca_key)

    # The names a client may use: loopback (tests, the TCP proxy) and the in-cluster ones.
    sans: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default"),
        x509.DNSName("kubernetes.default.svc"),
        x509.DNSName("kubernetes.default.svc.cluster.local"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address(KUBERNETES_SERVICE_IP)),
    ]
    _leaf(
        directory,
        "apiserver",
        ca_key,
        ca_name,
        _name("kube-apiserver"),
        ExtendedKeyUsageOID.SERVER_AUTH,
        sans,
    )
    # O=system:masters is the built-in cluster-admin group of RBAC's bootstrap policy.
    _leaf(
        directory,
        "admin",
        ca_key,
        ca_name,
        _name("spa-testenv-admin", "system:masters"),
        ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    # The user the bootstrap ClusterRoleBinding system:kube-controller-manager names.
    _leaf(
        directory,
        "controller-manager",
        ca_key,
        ca_name,
        _name("system:kube-controller-manager"),
        ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    _scheduler_cert(directory, ca_key, ca_name)
    # RSA like most real clusters (RS256 tokens); the apiserver verifies with the public half.
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_key(pki.service_account_key, sa_key)
    pki.service_account_pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pki


def _scheduler_cert(
    directory: Path, ca_key: ec.EllipticCurvePrivateKey, ca_name: x509.Name
) -> None:
    # The user the bootstrap ClusterRoleBinding system:kube-scheduler names.
    _leaf(
        directory,
        "scheduler",
        ca_key,
        ca_name,
        _name("system:kube-scheduler"),
        ExtendedKeyUsageOID.CLIENT_AUTH,
    )
