#!/usr/bin/env python3
"""A serving engine whose front process never touches CUDA and blocks on its worker without a timeout.

The front starts the worker (the process that would touch CUDA) with multiprocessing (--start-method fork|spawn)
and waits in one of these ways (--front):
  queue        result_queue.get()
  pipe         a read of a pipe whose write end it keeps open too (as an engine holding both ends does)
  socket       accept() on a listening socket the worker would connect to
  join         join() of a helper process (a detokenizer that never touches CUDA) that waits for the worker
  ignore-term  result_queue.get() after setting SIGTERM to SIG_IGN, so only SIGKILL ends it

The worker serves --requests requests and hands the front its result, after which everything exits 0; under the
profiler named by --forever-under (LLMPROF_PROFILER, which deep-profile sets for its profilers), it serves until it
is killed, so a profiler pass that does not end the front as well hangs for as long as it is let.

Handshakes, no sleeps: the front sets a multiprocessing Event just before its blocking call; the worker waits for
it, then writes its pid to --worker-pid-file (write and rename, with a newline: the fake ncu's
FAKE_NCU_CONNECTED_PID_FILE names the process it profiles from it). Every process appends "ROLE PID" to
--pids-file when it starts, so a test can check that none is left.
"""
import argparse
import multiprocessing
import os
import signal
import socket
import sys
import threading


def record(pids_file, role):
    if pids_file:
        with open(pids_file, "a", encoding="utf-8") as handle:
            handle.write(f"{role} {os.getpid()}\n")


def write_pid_file(path):
    if not path:
        return
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    os.replace(partial, path)


def serve(options, front_blocking, done):
    """The worker: what the profiler sees (it names this pid)."""
    record(options.pids_file, "worker")
    front_blocking.wait()
    write_pid_file(options.worker_pid_file)
    if options.forever:
        threading.Event().wait()  # until killed
    return sum(range(options.requests))


def worker_main(options, front_blocking, done, channel):
    result = serve(options, front_blocking, done)
    if options.front in ("queue", "ignore-term", "join"):
        channel.put(result)
    elif options.front == "pipe":
        channel.send(result)
    elif options.front == "socket":
        with socket.create_connection(("127.0.0.1", channel)) as connection:
            connection.sendall(str(result).encode())
    done.set()


def helper_main(options, done):
    """A process of the engine that never touches CUDA (a detokenizer): it lasts as long as the worker serves."""
    record(options.pids_file, "helper")
    done.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start-method", choices=["fork", "spawn"], required=True)
    parser.add_argument("--front", choices=["queue", "pipe", "socket", "join", "ignore-term"], required=True)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--forever-under", default="", help="serve until killed under this profiler (e.g. ncu)")
    parser.add_argument("--worker-pid-file", default="")
    parser.add_argument("--pids-file", default="")
    options = parser.parse_args()
    options.forever = bool(options.forever_under) and os.environ.get("LLMPROF_PROFILER") == options.forever_under

    record(options.pids_file, "front")
    context = multiprocessing.get_context(options.start_method)
    front_blocking = context.Event()
    done = context.Event()
    listener = None
    if options.front in ("queue", "ignore-term", "join"):
        channel = context.Queue()
        receive = channel.get
    elif options.front == "pipe":
        reader, channel = context.Pipe(duplex=False)
        receive = reader.recv  # the front keeps `channel`, the write end, open: no end of file when the worker dies
    else:
        listener = socket.create_server(("127.0.0.1", 0))
        channel = listener.getsockname()[1]

        def receive():
            connection, _ = listener.accept()
            with connection:
                return int(connection.recv(64).decode())

    worker = context.Process(target=worker_main, args=(options, front_blocking, done, channel), name="worker")
    worker.start()
    if options.front == "join":
        helper = context.Process(target=helper_main, args=(options, done), name="helper")
        helper.start()
    if options.front == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    front_blocking.set()
    if options.front == "join":
        helper.join()
        result = channel.get()
    else:
        result = receive()
    worker.join()
    print(f"front: the worker served {options.requests} requests (result {result})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
