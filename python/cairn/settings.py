"""Where a client connects and which token it sends, resolved the way the
`cairn` CLI does (auth/client_token.h, cli/commands.cc):

  server: the argument, else $CAIRN_SERVER, else 127.0.0.1:50051.
  token:  the argument, else $CAIRN_TOKEN (if non-empty), else the first line
          of token_file / $CAIRN_TOKEN_FILE (if non-empty), else of
          ~/.config/cairn/token if it exists, else none.
  TLS:    tls_ca / tls_cert / tls_key, else $CAIRN_TLS_CA / $CAIRN_TLS_CERT /
          $CAIRN_TLS_KEY; any of them turns TLS on.
"""
import os

import grpc

from cairn.errors import make_error

DEFAULT_SERVER = "127.0.0.1:50051"


def _invalid(message):
    return make_error(grpc.StatusCode.INVALID_ARGUMENT, message)


def resolve_server(server):
    server = server or os.environ.get("CAIRN_SERVER") or DEFAULT_SERVER
    host, sep, port = server.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise _invalid("server %r is not HOST:PORT (e.g. 127.0.0.1:50051)"
                       % server)
    return server


# A token is 70 characters and a token file its first line; more than this
# is no token file (and the file may be endless: /dev/zero). As cairn's.
_MAX_TOKEN_FILE_BYTES = 4096
_MAX_PEM_BYTES = 1 << 20


def _read_token_file(path, what):
    try:
        with open(path, "rb") as f:
            text = f.read(_MAX_TOKEN_FILE_BYTES + 1)
    except OSError as e:
        raise make_error(grpc.StatusCode.NOT_FOUND,
                         "%s: cannot read a token from %r (%s)"
                         % (what, path, e.strerror))
    if len(text) > _MAX_TOKEN_FILE_BYTES:
        raise _invalid("%s: no token: %r is over %d bytes"
                       % (what, path, _MAX_TOKEN_FILE_BYTES))
    token = text.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if not token:
        raise _invalid("%s: %r holds an empty token" % (what, path))
    return token


def resolve_token(token, token_file=None):
    if token:
        return token
    env = os.environ.get("CAIRN_TOKEN", "").strip()
    if env:
        return env
    token_file = token_file or os.environ.get("CAIRN_TOKEN_FILE")
    if token_file:
        return _read_token_file(token_file, "token_file")
    home = os.environ.get("HOME")
    if not home:
        return ""
    path = os.path.join(home, ".config", "cairn", "token")
    if not os.path.exists(path):
        return ""
    return _read_token_file(path, "~/.config/cairn/token")


def _read_file(path, what):
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_PEM_BYTES + 1)
    except OSError as e:
        raise make_error(grpc.StatusCode.NOT_FOUND, "%s: cannot read %r (%s)"
                         % (what, path, e.strerror))
    if len(data) > _MAX_PEM_BYTES:
        raise _invalid("%s: %r is over %d bytes: not a PEM file"
                       % (what, path, _MAX_PEM_BYTES))
    return data


def channel_credentials(tls_ca=None, tls_cert=None, tls_key=None):
    """grpc.ChannelCredentials for TLS, or None for plaintext."""
    ca = tls_ca or os.environ.get("CAIRN_TLS_CA")
    cert = tls_cert or os.environ.get("CAIRN_TLS_CERT")
    key = tls_key or os.environ.get("CAIRN_TLS_KEY")
    if not (ca or cert or key):
        return None
    if bool(cert) != bool(key):
        raise _invalid("tls_cert and tls_key go together (got only %s)"
                       % ("tls_cert" if cert else "tls_key"))
    return grpc.ssl_channel_credentials(
        root_certificates=_read_file(ca, "tls_ca") if ca else None,
        private_key=_read_file(key, "tls_key") if key else None,
        certificate_chain=_read_file(cert, "tls_cert") if cert else None)
