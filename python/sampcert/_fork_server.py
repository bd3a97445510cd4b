"""The fork server of a Python sampler (sampcert.certify(fork_server=True), the default).

A certification starts many sampler processes (one per worker, and a new one after each crash
or timeout); each would import the sampler and its libraries again (torch: seconds each).
certify() starts one server process that imports the sampler once (`_serve.py --fork-server
SOCKET ...`) and runs `sampcert run` with SAMPCERT_FORK_SERVER=SOCKET. A sampler process the
tool starts (`_serve.py ...`, the same command as without the server, so a report's
reproduction is unchanged) connects, sends its protocol descriptors (fds 3 and 4 and its
stderr) and its arguments; when they are the server's own, the server forks a child that
serves them, and the process waits for the child and exits with its status. Otherwise, or
when the server cannot be reached, the process serves the sampler itself.

The child is not a descendant of the process the tool started: the tool's syscall filter does
not reach it (SPEC section 14). It takes over that process's resource limits (the item's CPU
time and memory), and its status is that process's status, so a child that runs out of CPU time
is a Timeout as without the server. The server kills a child when the process
that asked for it dies (a killed worker, a timeout), and every child dies with the server.
"""

import array
import ctypes
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import traceback

_FDS = (3, 4, 2)  # requests, replies, stderr (stdout joins it, as the tool arranges)
_MAX_KEY = 1 << 20


def _send_fds(sock: socket.socket, data: bytes, fds) -> None:
    sock.sendmsg([struct.pack("<I", len(data)), data],
                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def _recv_request(conn: socket.socket):
    """(request, [fds]) of one request ({"argv": [...], "limits": {...}}), or None when it is
    malformed."""
    fds = array.array("i")
    msg, ancdata, _, _ = conn.recvmsg(_MAX_KEY + 4, socket.CMSG_LEN(len(_FDS) * fds.itemsize))
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
    if len(msg) < 4 or len(fds) != len(_FDS):
        for fd in fds:
            os.close(fd)
        return None
    (n,) = struct.unpack_from("<I", msg)
    while len(msg) < 4 + n:  # the rest of a long key
        more = conn.recv(4 + n - len(msg))
        if not more:
            break
        msg += more
    try:
        key = json.loads(msg[4:4 + n].decode("utf-8"))
    except ValueError:
        key = None
    return key, list(fds)


# The resource limits a child takes over from the process that asked for it: the tool's
# worker sets the item's CPU time and memory on its sampler process (runner/worker.cc).
_LIMITS = {"cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS, "core": resource.RLIMIT_CORE}


def delegate(path: str, argv) -> None:
    """In a sampler process the tool started: be served by the fork server at `path`. Exits
    with the serving child's status; returns when the server is gone or serves another
    command."""
    request = {"argv": list(argv),
               "limits": {name: list(resource.getrlimit(r)) for name, r in _LIMITS.items()}}
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.connect(path)
        _send_fds(sock, json.dumps(request).encode("utf-8"), _FDS)
        answer = sock.recv(2)
    except OSError:
        return
    if answer != b"OK":
        sock.close()
        return
    # The child holds the descriptors now: the host sees the end of the protocol when it ends.
    for fd in (3, 4):
        os.close(fd)
    status = b""
    while len(status) < 4:
        try:
            more = sock.recv(4 - len(status))
        except InterruptedError:
            continue
        if not more:
            os._exit(70)  # the server died: so did the child
        status += more
    (code,) = struct.unpack("<i", status)
    if code < 0:  # killed by a signal: so is this process, for the host to see
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _child(fds, limits, serve) -> None:
    """In the forked child: the requester's resource limits, its descriptors as 3, 4, 1 and 2,
    then serve."""
    code = 0
    try:
        _die_with_parent()
        for name, (soft, hard) in limits.items():
            resource.setrlimit(_LIMITS[name], (soft, hard))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        req, resp, err = fds
        os.dup2(req, 3)
        os.dup2(resp, 4)
        os.dup2(err, 2)
        os.dup2(err, 1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd in {req, resp, err, null} - {0, 1, 2, 3, 4}:
            os.close(fd)
        os.environ["SAMPCERT_PROTOCOL_FDS"] = "3,4"
        sys.stdout = sys.stderr
        serve()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: B902 - the child must never return into the server's loop
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def serve_forever(path: str, key, serve) -> None:
    """The server: listens at `path`, forks one child per request whose key is `key`, relays
    each child's exit status, kills a child whose requester died. Ends on SIGTERM or when its
    parent (certify) ends, killing its children."""
    _die_with_parent()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    listener.bind(path)
    listener.listen(64)
    children = {}  # child pidfd -> (child pid, connection, requester pidfd)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    try:
        while not stop:
            watched = [listener.fileno()]
            for pidfd, (_, _, requester) in children.items():
                watched += [pidfd, requester]
            try:
                readable, _, _ = select.select(watched, [], [], 1.0)
            except InterruptedError:
                continue
            for fd in readable:
                if fd == listener.fileno():
                    _accept(listener, key, serve, children)
                    continue
                for pidfd, (pid, conn, requester) in list(children.items()):
                    if fd == requester:  # the process that asked died: its child goes too
                        _kill(pid)
                    elif fd == pidfd:
                        _, status = os.waitpid(pid, 0)
                        code = (-os.WTERMSIG(status) if os.WIFSIGNALED(status)
                                else os.WEXITSTATUS(status))
                        try:
                            conn.sendall(struct.pack("<i", code))
                        except OSError:
                            pass
                        conn.close()
                        os.close(pidfd)
                        os.close(requester)
                        del children[pidfd]
    finally:
        for pidfd, (pid, conn, requester) in children.items():
            _kill(pid)
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _accept(listener, key, serve, children) -> None:
    conn, _ = listener.accept()
    try:
        request = _recv_request(conn)
        if request is None:
            conn.close()
            return
        their_request, fds = request
        pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                        struct.calcsize("3i")))
        ok = isinstance(their_request, dict) and their_request.get("argv") == key
        limits = their_request.get("limits", {}) if ok else {}
        if not ok or not isinstance(limits, dict) or set(limits) - set(_LIMITS):
            for fd in fds:
                os.close(fd)
            conn.sendall(b"NO")
            conn.close()
            return
        requester = os.pidfd_open(pid)
    except OSError:
        conn.close()
        return
    child = os.fork()
    if child == 0:
        listener.close()
        conn.close()
        for pidfd, (_, other, requester_fd) in children.items():
            other.close()
            os.close(pidfd)
            os.close(requester_fd)
        os.close(requester)
        _child(fds, limits, serve)
    for fd in fds:
        os.close(fd)
    children[os.pidfd_open(child)] = (child, conn, requester)
    try:
        conn.sendall(b"OK")
    except OSError:
        _kill(child)
