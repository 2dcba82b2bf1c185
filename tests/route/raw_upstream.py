"""A hostile HTTP/1.1 peer for the client-engine tests: a TCP server on 127.0.0.1 that reads each
request (head and Content-Length body), records it, and lets the test answer with raw bytes (any
framing, interim responses, endless chunk lines, a hang, a close).

    up = RawUpstream(answer).start()   # answer(sock, index) -> True to keep the connection
    up.url                             # http://127.0.0.1:<port>/v1
    up.requests()                      # [(connection number, head bytes, body bytes)]
    up.stop()
    ENDLESS                            # answers that never end, for send_endless()
"""

import itertools
import socket
import threading

MIB = 1024 * 1024

# Answers that never end, as (head, filler repeated after it): what the client engine must stop
# at max_header_bytes (the route and `mcpclass call` tests).
ENDLESS = {
    # Header fields that never end, each line complete (Beast parses them as they come).
    "header-fields": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", b"x-a: b\r\n"),
    # Transfer-Encoding: chunked, then a chunk-size line whose extension never ends.
    "chunk-extension": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n1;x=", b"x"),
    # An empty chunked body whose trailer section never ends.
    "trailer": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n0\r\n", b"x-trailer-field: value\r\n"),
}


def send_endless(sock, head, filler=b"x", cap=256 * MIB):
    """Sends `head`, then `filler` repeated until the peer goes away or `cap` bytes."""
    block = filler * (65536 // len(filler))
    sent = 0
    try:
        sock.sendall(head)
        while sent < cap:
            sock.sendall(block)
            sent += len(block)
    except OSError:
        pass
    return sent


class RawUpstream:
    def __init__(self, answer):
        self._answer = answer
        self._lock = threading.Lock()
        self._requests = []
        self._conns = []
        self._numbers = itertools.count(1)
        self.stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def start(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        self._listener.close()
        with self._lock:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()

    def requests(self):
        with self._lock:
            return list(self._requests)

    def _accept(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn, next(self._numbers)),
                             daemon=True).start()

    def _serve(self, conn, number):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                body, buf = buf[:length], buf[length:]
                with self._lock:
                    self._requests.append((number, head, body))
                    index = len(self._requests) - 1
                if not self._answer(conn, index):
                    return
        except OSError:
            pass
        finally:
            conn.close()
