#!/usr/bin/env python3
"""A serving engine shaped like vLLM's or SGLang's, written without knowledge of the profiler.

The front process never touches CUDA: it sends the worker a job and waits for the result in one of the ways
real engines do, none of which polls (--front):
  queue   multiprocessing.Queue.get() with no timeout      pipe    a read on a multiprocessing Pipe
  socket  accept() on a listening TCP socket on loopback    join    Process.join() with no timeout
  ignore-term  like queue, with SIGTERM ignored
The worker (--start-method fork or spawn) owns the GPU. After --warmup steps it opens a cudaProfilerStart/Stop
window for --steps steps: each step is a decode over the running batch (--graphs: a CUDA graph replay, as vLLM's
decode is) or, every --mixed-every steps, a mixed step that also runs a prompt chunk eagerly; each step ends
with the sampled tokens copied to the host (the per-step synchronisation every engine has). --nvtx names
the steps as vLLM (decode_batch/mixed_batch), SGLang (decode/mixed) or not at all (none).
After the window the worker serves on for --serve-seconds (0: until it is ended) before it answers the front:
a profiler that ends only the processes it traced leaves the front blocked.

Writes --facts (JSON): the kind of each step in the window, in order, so an oracle over the capture can cut
the window at the per-step synchronisation and sum each kind's GPU time independently of the profiler.
With --device cpu the model runs on the CPU without a window (for CPU tests of the process handling).
--ready FILE: the worker writes its pid there once its window is over (a handshake for tests).
"""
import argparse
import json
import multiprocessing as mp
import os
import signal
import socket
import sys
import time

KIND_NAMES = {"vllm": ("decode_batch", "mixed_batch"), "sglang": ("decode", "mixed"), "none": ("decode", "mixed")}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start-method", choices=("fork", "spawn"), default="spawn")
    parser.add_argument("--front", choices=("queue", "pipe", "socket", "join", "ignore-term"), default="queue")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--graphs", action="store_true", help="decode steps replay a captured CUDA graph")
    parser.add_argument("--nvtx", choices=tuple(KIND_NAMES), default="none")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--mixed-every", type=int, default=7, help="every Nth step is mixed (0: none)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--chunk", type=int, default=96, help="prompt tokens a mixed step adds")
    parser.add_argument("--serve-seconds", type=float, default=1.0, help="0: until ended")
    parser.add_argument("--facts", default="engine_facts.json")
    parser.add_argument("--ready", default=None)
    return parser.parse_args(argv)


class Model:
    def __init__(self, torch, args, device):
        self.torch = torch
        generator = torch.Generator().manual_seed(0)
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
        h = args.hidden
        self.layers = [(torch.randn(h, 3 * h, generator=generator) / h ** 0.5,
                        torch.randn(h, h, generator=generator) / h ** 0.5,
                        torch.randn(h, 4 * h, generator=generator) / h ** 0.5,
                        torch.randn(4 * h, h, generator=generator) / (4 * h) ** 0.5) for _ in range(args.layers)]
        self.layers = [tuple(w.to(device=device, dtype=dtype) for w in layer) for layer in self.layers]
        self.head = (torch.randn(h, 8192, generator=generator) / h ** 0.5).to(device=device, dtype=dtype)

    def forward(self, x):
        torch = self.torch
        for qkv, out, up, down in self.layers:
            q, k, v = (x @ qkv).chunk(3, dim=-1)
            attention = torch.softmax((q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5, dim=-1) @ v
            x = x + attention @ out
            x = x + torch.nn.functional.gelu(x @ up) @ down
        return (x @ self.head).argmax(dim=-1)


def worker_main(args, results):
    import torch
    device = args.device
    model = Model(torch, args, device)
    h = args.hidden
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    decode_input = torch.randn(args.batch, 1, h, device=device, dtype=dtype)
    chunk_input = torch.randn(1, args.chunk, h, device=device, dtype=dtype)
    graph = None
    if args.graphs and device == "cuda":
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                model.forward(decode_input)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            graph_tokens = model.forward(decode_input)
    nvtx = torch.cuda.nvtx if device == "cuda" and args.nvtx != "none" else None
    decode_name, mixed_name = KIND_NAMES[args.nvtx]

    def step(index):
        mixed = args.mixed_every > 0 and index % args.mixed_every == args.mixed_every - 1
        if nvtx:
            nvtx.range_push(mixed_name if mixed else decode_name)
        if graph is not None:
            graph.replay()
            tokens = graph_tokens
        else:
            tokens = model.forward(decode_input)
        if mixed:
            tokens = torch.cat([tokens.flatten(), model.forward(chunk_input).flatten()])
        host = tokens.cpu()  # the per-step synchronisation: sampled tokens to the host
        if nvtx:
            nvtx.range_pop()
        return ("mixed" if mixed else "decode"), int(host.numel())

    with torch.no_grad():
        for index in range(args.warmup):
            step(index)
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
        kinds = [step(index)[0] for index in range(args.steps)]
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
    with open(args.facts, "w") as handle:
        json.dump(dict(workload="engine", graphs=bool(graph is not None), nvtx=args.nvtx,
                       start_method=args.start_method, front=args.front, batch=args.batch,
                       steps=kinds, counts={k: kinds.count(k) for k in sorted(set(kinds))},
                       kind_names=dict(decode=decode_name, mixed=mixed_name)), handle, indent=1)
    if args.ready:
        with open(args.ready + ".tmp", "w") as handle:
            handle.write(str(os.getpid()))
        os.replace(args.ready + ".tmp", args.ready)
    deadline = time.monotonic() + args.serve_seconds
    while args.serve_seconds <= 0 or time.monotonic() < deadline:
        time.sleep(0.05)  # serving on: idle between requests
    results(len(kinds))


def run_worker(args, connection_kind, endpoint):
    """The worker's entry point in its own process: answers the front over the chosen channel."""
    if connection_kind == "queue":
        worker_main(args, endpoint.put)
    elif connection_kind == "pipe":
        worker_main(args, endpoint.send)
    elif connection_kind == "socket":
        def answer(value):
            with socket.create_connection(("127.0.0.1", endpoint)) as connection:
                connection.sendall(str(value).encode())
        worker_main(args, answer)
    else:
        worker_main(args, lambda value: None)


def main(argv=None):
    args = parse_args(argv)
    context = mp.get_context(args.start_method)
    front = args.front
    if front == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        front = "queue"
    if front == "queue":
        channel = context.Queue()
        worker = context.Process(target=run_worker, args=(args, "queue", channel))
        worker.start()
        print("engine: worker answered", channel.get(), flush=True)
    elif front == "pipe":
        receiving, sending = context.Pipe(duplex=False)
        worker = context.Process(target=run_worker, args=(args, "pipe", sending))
        worker.start()
        print("engine: worker answered", receiving.recv(), flush=True)
    elif front == "socket":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        worker = context.Process(target=run_worker, args=(args, "socket", listener.getsockname()[1]))
        worker.start()
        connection, _ = listener.accept()
        print("engine: worker answered", connection.recv(64).decode(), flush=True)
    else:
        worker = context.Process(target=run_worker, args=(args, "join", None))
        worker.start()
        worker.join()
        print("engine: worker exited", worker.exitcode, flush=True)
    worker.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
