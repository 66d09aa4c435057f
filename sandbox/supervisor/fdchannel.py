"""Length-prefixed JSON messages with attached file descriptors, over a Unix
stream socket, between the supervisor, the zygote and the reapers.

A message is a 4-byte big-endian length and that many bytes of JSON; file
descriptors (SCM_RIGHTS) travel with the message's first bytes. The kernel
never merges a recvmsg across a batch of passed descriptors, so every batch is
handed to the next message that completes.
"""

import json
import os
import socket
import struct

_LENGTH = struct.Struct(">I")
_MAX_FDS = 8


def pair():
    """A connected (left, right) socket pair; both ends close-on-exec."""
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)


def send(sock, message, fds=()):
    payload = json.dumps(message).encode()
    data = _LENGTH.pack(len(payload)) + payload
    sent = socket.send_fds(sock, [data], list(fds)) if fds else sock.send(data)
    if sent < len(data):
        sock.sendall(data[sent:])


class Receiver:
    """Collects bytes and descriptors from one socket; yields (message, fds)."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = bytearray()
        self.fds = []
        self.eof = False

    def fill(self):
        """One recvmsg. Sets `eof` when the peer is gone."""
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, _MAX_FDS)
        except BlockingIOError:
            return
        except ConnectionResetError:
            data, fds = b"", []
        # Close-on-exec (recv_fds drops its flags argument): a reaper's commands
        # must get only the fds it hands them as stdio (launch.py), never these.
        for fd in fds:
            os.set_inheritable(fd, False)
        self.fds.extend(fds)
        if not data:
            self.eof = True
            return
        self.buffer += data

    def messages(self):
        while len(self.buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(self.buffer)
            end = _LENGTH.size + length
            if len(self.buffer) < end:
                return
            message = json.loads(bytes(self.buffer[_LENGTH.size:end]))
            del self.buffer[:end]
            fds, self.fds = self.fds, []
            yield message, fds

    def receive(self):
        """Blocks until one whole message arrives; None at EOF."""
        while True:
            for item in self.messages():
                return item
            if self.eof:
                return None
            self.fill()

    def close_fds(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []
