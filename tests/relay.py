"""A ProxyCommand for tests: `python3 relay.py HOST PORT LOG` appends a line to LOG (each
run counted), then carries stdin to a TCP connection to HOST:PORT and its answers to stdout,
as `nc HOST PORT` would (no nc or socat is needed)."""

from __future__ import annotations

import os
import socket
import sys
import threading


def pump_in(sock: socket.socket) -> None:
    while data := os.read(0, 65536):
        sock.sendall(data)
    sock.shutdown(socket.SHUT_WR)


def main() -> None:
    host, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(log, "a") as file:
        file.write(f"relay {host} {port}\n")
    sock = socket.create_connection((host, port))
    threading.Thread(target=pump_in, args=(sock,), daemon=True).start()
    while data := sock.recv(65536):
        os.write(1, data)


if __name__ == "__main__":
    main()
