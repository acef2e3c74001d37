"""A project's credentials for Apple's push service, as an operator uploads them with
`herald project apns-key` and `herald project apns-certificate`: checked, stored, listed by
`herald project show` without the key, replaced and removed."""
import datetime
import os
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from apns_simulator import make_p8
from conftest import HERALD, HeraldServer

PROJECT = "apns-credentials"


@pytest.fixture(scope="module")
def herald():
    server = HeraldServer()
    server.projects = {PROJECT: server.create_project(PROJECT)}
    yield server
    server.stop()


def run(server, *args, stdin=None):
    return subprocess.run([HERALD, "project", *args, "--data-dir", server.data_dir], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_a_p8_key_is_stored_listed_without_the_key_and_removed(herald, tmp_path):
    pem = make_p8()
    key_file = tmp_path / "AuthKey_KEY1234567.p8"
    key_file.write_text(pem)
    done = run(herald, "apns-key", PROJECT, "--key-file", str(key_file), "--key-id", "KEY1234567",
               "--team-id", "TEAM123456", "--bundle-id", "com.example.ios", "--environment", "development")
    assert done.returncode == 0, done.stderr
    shown = run(herald, "show", PROJECT).stdout
    assert "token: key KEY1234567, team TEAM123456, bundle com.example.ios, development" in shown
    secret = "".join(pem.splitlines()[1:-1])
    assert secret[:40] not in shown and secret[:40] not in done.stdout
    # A file that is not a P-256 key, or ids not of Apple's form, are refused and change nothing.
    (tmp_path / "rsa.p8").write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    refused = run(herald, "apns-key", PROJECT, "--key-file", str(tmp_path / "rsa.p8"), "--key-id", "KEY7654321",
                  "--team-id", "TEAM123456", "--bundle-id", "com.example.ios")
    assert refused.returncode != 0 and "P-256" in refused.stderr
    assert run(herald, "apns-key", PROJECT, "--key-file", str(key_file), "--key-id", "short", "--team-id",
               "TEAM123456", "--bundle-id", "com.example.ios").returncode != 0
    assert "KEY1234567" in run(herald, "show", PROJECT).stdout
    assert run(herald, "apns-key", PROJECT, "--remove").returncode == 0
    assert "apns credentials: none" in run(herald, "show", PROJECT).stdout


def apple_certificate(expired=False):
    """A client certificate in the shape Apple issues: the bundle id as the subject's UID,
    the production environment as Apple's extension."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.USER_ID, "com.example.certified"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "Apple Push Services: com.example.certified")])
    now = datetime.datetime.now(datetime.timezone.utc)
    start = now - datetime.timedelta(days=400 if expired else 1)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(start)
                   .not_valid_after(start + datetime.timedelta(days=365))
                   .add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.840.113635.100.6.3.2"),
                                                             b"\x05\x00"), critical=False)
                   .sign(key, hashes.SHA256()))
    return key, certificate


def test_a_pkcs12_certificate_with_its_password_on_standard_input_names_its_bundle_and_environment(herald, tmp_path):
    key, certificate = apple_certificate()
    bundle = pkcs12.serialize_key_and_certificates(
        b"push", key, certificate, None, serialization.BestAvailableEncryption(b"s3cret pass"))
    path = tmp_path / "push.p12"
    path.write_bytes(bundle)
    assert run(herald, "apns-certificate", PROJECT, "--certificate", str(path), stdin="wrong\n").returncode != 0
    done = run(herald, "apns-certificate", PROJECT, "--certificate", str(path), stdin="s3cret pass\n")
    assert done.returncode == 0, done.stderr
    assert "certificate: PKCS#12, bundle com.example.certified, production" in run(herald, "show", PROJECT).stdout
    expired_key, expired = apple_certificate(expired=True)
    pem = tmp_path / "expired.pem"
    pem.write_bytes(expired.public_bytes(serialization.Encoding.PEM) + expired_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    refused = run(herald, "apns-certificate", PROJECT, "--certificate", str(pem))
    assert refused.returncode != 0 and "expired" in refused.stderr
    assert run(herald, "apns-certificate", PROJECT, "--remove").returncode == 0
