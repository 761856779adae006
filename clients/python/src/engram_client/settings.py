"""What a connection is made with: the server's address, TLS, the API key,
the deadline of a call and the retry policy, checked once."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import metadata

import grpc

from engram_client.retry import RetryPolicy

DEFAULT_ADDRESS = "127.0.0.1:50051"
"""The server a client connects to when given no address (the server's own
default ``--listen``)."""

DEFAULT_TIMEOUT = 30.0
"""How long one try of a call may take by default, in seconds."""

MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The largest response accepted. A batch create echoes every memory it
stored, which can be far above gRPC's default of 4 MiB."""

# How soon the channel tries to reconnect after a failed connection, in
# milliseconds. gRPC waits 1 s at first by default and fails every call at once
# meanwhile, which would use up the retries of a call made just after a
# server restart; the growth from there is capped by the retry policy's
# longest wait.
INITIAL_RECONNECT_BACKOFF_MS = 100


@dataclass(frozen=True)
class Tls:
    """TLS settings for a server that speaks TLS (``--tls-cert``). Without
    any, ``tls=True`` trusts the system's certificate authorities."""

    root_certificates: bytes | None = None
    """The PEM certificate authority to trust instead of the system's (a
    private CA, or a self-signed server certificate)."""
    certificate_chain: bytes | None = None
    """A PEM client certificate, for a server that asks for one (mutual TLS,
    ``--tls-client-ca``); needs `private_key`."""
    private_key: bytes | None = field(default=None, repr=False)
    """The PEM private key of `certificate_chain` (never shown in a repr)."""
    server_name: str | None = None
    """The name the server's certificate must carry, when it differs from
    the address's host (e.g. connecting by IP address)."""


@dataclass(frozen=True)
class Settings:
    """A connection's checked settings, as `settings` makes them."""

    target: str
    """``host:port`` for grpc."""
    credentials: grpc.ChannelCredentials | None
    """TLS credentials, or None for plaintext."""
    options: list[tuple[str, str | int]]
    """Channel options."""
    metadata: tuple[tuple[str, str], ...] = field(repr=False)
    """Sent with every call (the API key; never shown in a repr)."""
    timeout: float | None
    """The deadline of one try of a unary call, in seconds; None: none."""
    retry: RetryPolicy
    """How failed calls are tried again."""


def settings(
    addr: str, *, api_key: str | None, tls: bool | Tls, timeout: float | None, retry: RetryPolicy
) -> Settings:
    """Checks and combines a client's arguments; raises ValueError for
    settings that cannot work (nothing is sent)."""
    target = addr
    scheme_tls = False
    if "://" in addr:
        scheme, _, target = addr.partition("://")
        if scheme.lower() not in ("http", "https"):
            raise ValueError(f"the server address {addr!r} must be host:port, http://host:port or https://host:port")
        scheme_tls = scheme.lower() == "https"
        if not scheme_tls and tls:
            raise ValueError(f"TLS settings need an https:// server address or a bare host:port, not {addr!r}")
    target = target.rstrip("/")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"the server address {addr!r} has no host:port")
    tls_settings = tls if isinstance(tls, Tls) else Tls() if (tls or scheme_tls) else None
    options: list[tuple[str, str | int]] = [
        ("grpc.max_receive_message_length", MAX_RESPONSE_BYTES),
        ("grpc.initial_reconnect_backoff_ms", INITIAL_RECONNECT_BACKOFF_MS),
        ("grpc.max_reconnect_backoff_ms", max(INITIAL_RECONNECT_BACKOFF_MS, int(retry.max_backoff * 1000))),
        ("grpc.primary_user_agent", f"engram-client-python/{_version()}"),
    ]
    credentials = None
    if tls_settings is not None:
        if (tls_settings.certificate_chain is None) != (tls_settings.private_key is None):
            raise ValueError("a TLS client certificate needs its private key, and a key its certificate")
        if tls_settings.root_certificates is not None and b"-----BEGIN CERTIFICATE-----" not in tls_settings.root_certificates:
            raise ValueError("the TLS root certificates hold no PEM certificate")
        credentials = grpc.ssl_channel_credentials(
            root_certificates=tls_settings.root_certificates,
            private_key=tls_settings.private_key,
            certificate_chain=tls_settings.certificate_chain,
        )
        if tls_settings.server_name:
            options.append(("grpc.ssl_target_name_override", tls_settings.server_name))
    metadata_pairs: tuple[tuple[str, str], ...] = ()
    if api_key is not None:
        if not api_key or not api_key.isascii() or not api_key.isprintable():
            raise ValueError("the API key must be printable ASCII to be sent as a header")
        metadata_pairs = (("authorization", f"Bearer {api_key}"),)
    if timeout is not None and timeout <= 0:
        raise ValueError(f"the timeout must be positive seconds or None, not {timeout!r}")
    if retry.max_attempts < 1:
        raise ValueError("a retry policy tries at least once (max_attempts >= 1)")
    return Settings(target, credentials, options, metadata_pairs, timeout, retry)


def _version() -> str:
    """This package's installed version, for the user agent."""
    try:
        return metadata.version("engram-client")
    except metadata.PackageNotFoundError:
        return "unknown"
