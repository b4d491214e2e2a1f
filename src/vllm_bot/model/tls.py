"""TLS for the model client, with the trusted certificates loaded at the first https connection.

The SDK's HTTP transport builds its TLS context when the client is made, and that loads the whole
CA bundle: ~75 ms of a 2-core machine's CPU before the first request, spent even though most vLLM
servers are plain http on the user's own network. `LazyTLSContext` verifies as strictly as that
default (TLS client mode: a certificate chain to a trusted CA and a matching host name are
required) and loads the trusted certificates just before its first handshake, so a session that
never speaks TLS never pays for them. Where no trust store is found the handshake fails: the context
fails closed, never open.

Where the certificates come from, as the transport's default on Linux: the file or directory in
SSL_CERT_FILE / SSL_CERT_DIR, else OpenSSL's compiled-in paths, else the usual bundle files of
Linux distributions. Elsewhere (macOS, Windows: the transport asks the system's trust store) the
SDK's default is kept.
"""

from __future__ import annotations

import os
import re
import ssl
import sys
import threading
from typing import Any

# Where Linux distributions keep their CA bundle, for a Python whose OpenSSL paths point nowhere.
BUNDLES = (
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
)
_lock = threading.Lock()


class LazyTLSContext(ssl.SSLContext):
    """A client TLS context that loads the trusted certificates before its first handshake."""

    _trusted = False

    def __new__(cls) -> LazyTLSContext:
        return super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        self.trust()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        self.trust()
        return super().wrap_bio(*args, **kwargs)

    @property
    def trusted(self) -> bool:
        """Whether the trusted certificates have been loaded (a TLS connection was made)."""
        return self._trusted

    def trust(self) -> None:
        """Load the trusted certificates, once."""
        if self._trusted:
            return
        with _lock:
            if not self._trusted:
                cafile, capath = trust_store()
                if cafile or capath:
                    self.load_verify_locations(cafile, capath)
                self._trusted = True


def trust_store() -> tuple[str | None, str | None]:
    """(CA file, CA directory) to trust; (None, None) when there is none (no server is trusted)."""
    named_file, named_dir = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if named_file:  # one that does not exist trusts nothing, as OpenSSL does
        return (named_file if os.path.isfile(named_file) else None), None
    if named_dir:
        return None, (named_dir if os.path.isdir(named_dir) else None)
    paths = ssl.get_default_verify_paths()
    cafile = paths.openssl_cafile if paths.openssl_cafile and os.path.isfile(paths.openssl_cafile) else None
    capath = paths.openssl_capath if paths.openssl_capath and os.path.isdir(paths.openssl_capath) else None
    if capath and not cafile and not _hashed(capath):
        capath = None  # a directory OpenSSL cannot look certificates up in
    if cafile or capath:
        return cafile, capath
    return next((b for b in BUNDLES if os.path.isfile(b)), None), None


def _hashed(directory: str) -> bool:
    """Whether `directory` holds certificates under OpenSSL's hashed names (`1a2b3c4d.0`)."""
    try:
        return any(re.fullmatch(r"[0-9a-fA-F]{8}\.\d+", name) for name in os.listdir(directory))
    except OSError:
        return False


def lazy_context() -> LazyTLSContext | None:
    """The context for the model client here; None where the SDK's default should stay."""
    return LazyTLSContext() if sys.platform.startswith("linux") else None
