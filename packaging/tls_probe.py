"""A PostgreSQL-speaking TLS endpoint for ci_bundle_check.sh: proves the bundled libpq does TLS with the bundle's
OpenSSL (packaging/shared_openssl.py links psycopg-binary's private copy to it).

    python packaging/tls_probe.py FOLDER      # writes FOLDER/cert.pem and FOLDER/port, serves one connection

It answers libpq's SSLRequest with "S", completes a real TLS handshake with a fresh self-signed certificate for
``localhost``, reads the startup message inside TLS and answers an ErrorResponse "TLS OK: <version> <cipher>".
A client run with ``sslmode=verify-full&sslrootcert=FOLDER/cert.pem`` therefore prints that sentence only if the
handshake, the certificate check and the host-name check all passed. Not a database: nothing else is spoken.
"""

from __future__ import annotations

import datetime
import socket
import ssl
import struct
import sys
from pathlib import Path

_SSL_REQUEST = 80877103


def _certificate(folder: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))


def _recv(sock: socket.socket | ssl.SSLSocket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the client closed the connection")
        data += chunk
    return data


def main(folder: Path) -> int:
    _certificate(folder)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(60)
        (folder / "port.tmp").write_text(str(server.getsockname()[1]))
        (folder / "port.tmp").rename(folder / "port")
        conn, _addr = server.accept()
        with conn:
            _length, code = struct.unpack("!ii", _recv(conn, 8))
            if code != _SSL_REQUEST:
                print(f"tls probe: the client did not ask for TLS (code {code})", file=sys.stderr)
                return 1
            conn.sendall(b"S")
            with ctx.wrap_socket(conn, server_side=True) as tls:
                size, = struct.unpack("!i", _recv(tls, 4))
                _recv(tls, size - 4)  # the startup message, inside TLS
                message = f"TLS OK: {tls.version()} {tls.cipher()[0]}"
                fields = b"SFATAL\0C28000\0M" + message.encode() + b"\0\0"
                tls.sendall(b"E" + struct.pack("!i", 4 + len(fields)) + fields)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
