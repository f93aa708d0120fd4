# A serving-shaped workload: a front process that receives requests over time and an engine worker process
# (multiprocessing "spawn", as vLLM's and SGLang's workers are) that runs continuous batching.
#
# Each engine step is one forward over a batch that mixes the prompts of newly admitted requests (prefill)
# with the next token of running ones (decode), then samples. NVTX ranges follow vLLM's proposed names:
#   scheduler_step > prefill_batch | decode_batch | mixed_batch   (the forward; one kind per step)
#   scheduler_step > sampling
# After --warmup steps the worker opens a profiling window with torch.cuda.profiler.start() (cudaProfilerStart)
# and closes it with stop() after --window steps; --windows 2 opens a second one --gap steps later. It counts
# the steps of each kind inside each window, with the prompt and generated tokens they carried, prints them and
# writes them to --counts (JSON), so a profiler's report can be checked against the workload's own count.
#
# Without CUDA (PyTorch CPU build) it runs a tiny model on the CPU with NVTX and the window as no-ops, so the
# scheduling logic can be smoke-tested anywhere: python serve.py --device cpu --requests 12
import argparse
import json
import multiprocessing as mp
import os
import random
import sys
import time

STEP_KINDS = ("prefill_batch", "decode_batch", "mixed_batch")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    parser.add_argument("--requests", type=int, default=96, help="requests the front process sends")
    parser.add_argument("--arrival-ms", type=float, default=6.0, help="mean time between requests")
    parser.add_argument("--max-batch", type=int, default=16, help="running requests at most")
    parser.add_argument("--max-prefills", type=int, default=4, help="prompts admitted per step at most")
    parser.add_argument("--warmup", type=int, default=30, help="steps before the first window opens")
    parser.add_argument("--window", type=int, default=40, help="steps per window")
    parser.add_argument("--windows", type=int, default=1, help="profiling windows (cudaProfilerStart/Stop pairs)")
    parser.add_argument("--gap", type=int, default=10, help="steps between windows")
    parser.add_argument("--counts", default=os.environ.get("SERVING_STEP_COUNTS", "serving_steps.json"),
                        help="where to write the per-window step counts (JSON)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


class Nvtx:
    """torch.cuda.nvtx when the build has it (a CPU-only build may not); otherwise no-ops."""

    def __init__(self, torch, enabled):
        self.push = lambda name: None
        self.pop = lambda: None
        if enabled:
            self.push = torch.cuda.nvtx.range_push
            self.pop = torch.cuda.nvtx.range_pop


class Model:
    """A small decoder-shaped stack: embedding, per layer a projection over a cached context and an MLP, LM head."""

    def __init__(self, torch, device, cpu_tiny):
        self.torch = torch
        hidden, layers, vocab, context = (64, 2, 512, 64) if cpu_tiny else (1024, 8, 32000, 1024)
        dtype = torch.float32 if cpu_tiny else torch.bfloat16
        generator = torch.Generator(device="cpu").manual_seed(0)

        def weight(*shape):
            return (torch.randn(*shape, generator=generator) * 0.02).to(device=device, dtype=dtype)

        self.embedding = weight(vocab, hidden)
        self.layers = [dict(cache=weight(context, hidden), up=weight(4 * hidden, hidden), down=weight(hidden, 4 * hidden))
                       for _ in range(layers)]
        self.head = weight(vocab, hidden)
        self.device = device

    def forward(self, tokens):
        torch = self.torch
        x = self.embedding[tokens]
        for layer in self.layers:
            scores = torch.softmax((x @ layer["cache"].T).float(), dim=-1).to(x.dtype)
            x = x + scores @ layer["cache"]
            x = x + torch.nn.functional.gelu(x @ layer["up"].T) @ layer["down"].T
        return x

    def sample(self, hidden_last):
        return (hidden_last @ self.head.T).argmax(dim=-1)


class WindowCounter:
    """Which window a step falls in, and the counts of step kinds inside each window."""

    def __init__(self, args):
        self.starts = [args.warmup + w * (args.window + args.gap) for w in range(args.windows)]
        self.length = args.window
        self.windows = [{"steps": {kind: 0 for kind in STEP_KINDS},
                         "prompt_tokens": {kind: 0 for kind in STEP_KINDS},
                         "decode_tokens": {kind: 0 for kind in STEP_KINDS}} for _ in self.starts]

    def opens_at(self, step):
        return step in self.starts

    def closes_after(self, step):
        return any(step == start + self.length - 1 for start in self.starts)

    def record(self, step, kind, prompt_tokens, decode_tokens):
        for index, start in enumerate(self.starts):
            if start <= step < start + self.length:
                window = self.windows[index]
                window["steps"][kind] += 1
                window["prompt_tokens"][kind] += prompt_tokens
                window["decode_tokens"][kind] += decode_tokens


def engine_worker(args, requests, results):
    import torch

    cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    device = "cuda" if cuda else "cpu"
    model = Model(torch, device, cpu_tiny=not cuda)
    nvtx = Nvtx(torch, enabled=cuda)
    counter = WindowCounter(args)
    waiting, running = [], []  # running: [tokens generated, tokens wanted]
    finished_input = False
    step = 0
    window_open = False
    started = time.perf_counter()
    with torch.inference_mode():
        while not (finished_input and not waiting and not running):
            while True:  # take every request that has arrived; block only when idle
                try:
                    item = requests.get(block=not (waiting or running) and not finished_input, timeout=5)
                except Exception:
                    break
                if item is None:
                    finished_input = True
                    break
                waiting.append(item)
            if not waiting and not running:
                continue
            admitted = []
            while waiting and len(admitted) < args.max_prefills and len(running) + len(admitted) < args.max_batch:
                admitted.append(waiting.pop(0))
            kind = "mixed_batch" if admitted and running else ("prefill_batch" if admitted else "decode_batch")
            if cuda and counter.opens_at(step) and not window_open:
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                window_open = True
            prompt_tokens = sum(request["prompt"] for request in admitted)
            decode_tokens = len(running)
            nvtx.push("scheduler_step")
            nvtx.push(kind)
            tokens = torch.randint(0, model.embedding.shape[0], (prompt_tokens + decode_tokens,), device=device)
            hidden = model.forward(tokens)
            nvtx.pop()
            nvtx.push("sampling")
            # One sampled token per sequence: the last position of each prompt, every decode position.
            ends = [sum(r["prompt"] for r in admitted[: i + 1]) - 1 for i in range(len(admitted))]
            ends += list(range(prompt_tokens, prompt_tokens + decode_tokens))
            next_tokens = model.sample(hidden[torch.tensor(ends, device=device)])
            next_tokens.cpu()  # the scheduler needs the tokens: one device-to-host copy per step
            nvtx.pop()
            nvtx.pop()
            counter.record(step, kind, prompt_tokens, decode_tokens)
            if cuda and window_open and counter.closes_after(step):
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                window_open = False
            for request in running:
                request[0] += 1
            running = [r for r in running if r[0] < r[1]] + [[1, request["output"]] for request in admitted]
            step += 1
        if window_open:  # the requests ran out before the window's last step
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
    results.put({"device": device, "steps": step, "seconds": time.perf_counter() - started, "pid": os.getpid(),
                 "windows": counter.windows, "window_starts": counter.starts, "window_steps": args.window})


def write_step_tokens(windows):
    """The same counts for deep-profile (schema llmprof.step_tokens/1, llmprof/step_tokens.hpp), where
    LLMPROF_STEP_TOKENS_FILE says: it divides each step kind's time by the tokens its steps carried."""
    path = os.environ.get("LLMPROF_STEP_TOKENS_FILE")
    if not path:
        return
    kinds = [{kind: {"steps": window["steps"][kind], "prompt_tokens": window["prompt_tokens"][kind],
                     "decode_tokens": window["decode_tokens"][kind]} for kind in STEP_KINDS} for window in windows]
    with open(path, "w") as out:
        json.dump({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": k} for k in kinds]}, out, indent=1)


def main(argv):
    args = parse_args(argv)
    rng = random.Random(args.seed)
    context = mp.get_context("spawn")
    requests, results = context.Queue(), context.Queue()
    worker = context.Process(target=engine_worker, args=(args, requests, results), name="engine-worker")
    worker.start()
    for _ in range(args.requests):  # requests arrive over time, as a server receives them
        requests.put({"prompt": rng.randint(32, 256), "output": rng.randint(8, 48)})
        time.sleep(rng.expovariate(1000.0 / args.arrival_ms))
    requests.put(None)
    summary = None
    while summary is None and (worker.is_alive() or not results.empty()):
        try:
            summary = results.get(timeout=1)
        except Exception:
            pass
    worker.join()
    if summary is None or worker.exitcode != 0:
        print(f"engine worker failed with exit code {worker.exitcode}", file=sys.stderr)
        return 1
    summary["front_pid"] = os.getpid()
    with open(args.counts, "w") as out:
        json.dump(summary, out, indent=1)
    write_step_tokens(summary["windows"])
    print(f"engine worker pid {summary['pid']} on {summary['device']}: {summary['steps']} steps in "
          f"{summary['seconds']:.2f} s")
    for index, window in enumerate(summary["windows"], start=1):
        counts = ", ".join(f"{kind}={window['steps'][kind]}" for kind in STEP_KINDS)
        print(f"window {index} (steps {summary['window_starts'][index - 1]}..): {counts}")
    print(f"counts written to {args.counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
