"""Loaded by a server under test (``PYTHONPATH``): every connection to, or name lookup of, anything but this machine is
refused before a packet leaves, and written to ``$STUDIO_OUTSIDE_LOG`` (tests/e2e/test_no_outside_requests_workflow.py)."""

import ipaddress
import os
import socket

_LOG = os.environ.get("STUDIO_OUTSIDE_LOG")
_LOCAL_NAMES = {"localhost", "", None}


def _local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in _LOCAL_NAMES or host == socket.gethostname():
        return True
    try:
        address = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _refuse(what: str) -> None:
    with open(_LOG, "a") as log:
        log.write(what + "\n")
    raise OSError(f"outside request refused by the test: {what}")


if _LOG:
    _connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
            _refuse(f"connect {address!r}")
        return _connect(self, address)

    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
            _refuse(f"connect {address!r}")
        return _connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not _local(host):
            _refuse(f"lookup {host!r}")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
