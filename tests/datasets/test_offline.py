"""The suite's network guard (tests/conftest.py): remote connections are refused, loopback works."""

import socket
import threading
import urllib.request

import pytest


def test_remote_connections_and_lookups_are_refused(no_network):
    with pytest.raises(RuntimeError, match="must not use the network"):
        urllib.request.urlopen("https://archive.ics.uci.edu/", timeout=5)
    with pytest.raises(RuntimeError, match="DNS"):
        socket.getaddrinfo("example.org", 443)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s, pytest.raises(RuntimeError, match="connect"):
        s.connect(("192.0.2.1", 80))  # TEST-NET-1: refused before any packet leaves
    assert len(no_network) == 3
    no_network.clear()  # the refusals above were the point of this test


def test_loopback_connections_work():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        accepted = threading.Thread(target=lambda: server.accept()[0].close())
        accepted.start()
        with socket.create_connection(("localhost", port), timeout=5):
            pass
        accepted.join(5)
