# A serving-shaped workload: a front process that receives requests over time and an engine worker process
# (multiprocessing "spawn", as vLLM's and SGLang's workers are; --start-method fork for engines that fork)
# that runs continuous batching.
#
# Each engine step is one forward over a batch that mixes the prompts of newly admitted requests (prefill)
# with the next token of running ones (decode), then samples. By default the NVTX ranges follow vLLM's
# proposed names:
#   scheduler_step > prefill_batch | decode_batch | mixed_batch   (the forward; one kind per step)
#   scheduler_step > sampling
# --ranges flat drops the scheduler_step wrapper (each step is one top-level range named for its kind, with
# its sampling range inside it), --ranges none emits no range; --kind-names sglang names the kinds after
# SGLang's ForwardMode (extend, decode, mixed); --nvtx-domain NAME pushes every range in that NVTX domain.
# After --warmup steps the worker opens a profiling window with torch.cuda.profiler.start() (cudaProfilerStart)
# and closes it with stop() after --window steps; --windows 2 opens a second one --gap steps later. It counts
# the steps of each kind inside each window, with the prompt and generated tokens they carried, prints them and
# writes them to --counts (JSON), so a profiler's report can be checked against the workload's own count.
#
# Without CUDA (PyTorch CPU build) it runs a tiny model on the CPU with NVTX and the window as no-ops, so the
# scheduling logic can be smoke-tested anywhere: python serve.py --device cpu --requests 12
import argparse
import contextlib
import importlib
import json
import multiprocessing as mp
import os
import random
import sys
import time

# What each engine family calls the three kinds of step: vLLM's proposed step ranges, and SGLang's ForwardMode
# (EXTEND is its prefill). The counts files use the same names as the ranges, so a report's step kinds can be
# matched to the workload's own count whichever convention the ranges follow.
KIND_NAMES = {
    "vllm": {"prefill": "prefill_batch", "decode": "decode_batch", "mixed": "mixed_batch"},
    "sglang": {"prefill": "extend", "decode": "decode", "mixed": "mixed"},
}


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
    parser.add_argument("--ranges", choices=("nested", "flat", "none"), default="nested",
                        help="NVTX shape of a step: nested (scheduler_step > kind, sampling), flat (the kind range "
                             "at the top level, sampling inside it) or none (no ranges; the window and the counts "
                             "stay)")
    parser.add_argument("--kind-names", choices=tuple(KIND_NAMES), default="vllm",
                        help="step kind names: vllm (prefill_batch, decode_batch, mixed_batch) or sglang "
                             "(extend, decode, mixed)")
    parser.add_argument("--nvtx-domain", metavar="NAME", default=None,
                        help="push the ranges in this NVTX domain (needs the nvtx Python package); "
                             "default: NVTX's default domain")
    parser.add_argument("--start-method", choices=("spawn", "fork"), default="spawn",
                        help="multiprocessing start method of the engine worker")
    args = parser.parse_args(argv)
    if args.nvtx_domain is not None:
        if args.ranges == "none":
            parser.error("--nvtx-domain names the domain of the ranges, and --ranges none emits none")
        if not args.nvtx_domain:
            parser.error("--nvtx-domain needs a name (leave it out for NVTX's default domain)")
        # Checked here, before the worker starts, so a missing package is one clear message rather than a
        # traceback from the worker. Importing nvtx does not initialise CUDA, so a fork-started worker is safe.
        try:
            importlib.import_module("nvtx")
        except ImportError as error:
            parser.error(f"--nvtx-domain needs the 'nvtx' Python package (pip install nvtx), which is not "
                         f"importable here ({error}); torch.cuda.nvtx.range_push has no domain argument")
    return args


def step_ranges(style, kind):
    """The NVTX ranges of one step, outermost first: (around the whole step, around its forward, around its
    sampling). nested: scheduler_step > kind | sampling. flat: the kind range is the step and holds the
    sampling range, as in an engine whose one step range holds its forward and its sampling, so all of a
    step's GPU work lies inside its kind range. none: no range."""
    if style == "nested":
        return ("scheduler_step",), (kind,), ("sampling",)
    if style == "flat":
        return (kind,), (), ("sampling",)
    return (), (), ()


class Nvtx:
    """Pushes and pops NVTX ranges: torch.cuda.nvtx in the default domain (a CPU-only build may lack it), the
    nvtx package in a named domain (torch's range_push takes no domain); no-ops when not enabled."""

    def __init__(self, torch, enabled, domain=None):
        self.push = lambda name: None
        self.pop = lambda: None
        if enabled and domain:
            import nvtx

            self.push = lambda name: nvtx.push_range(name, domain=domain)
            self.pop = lambda: nvtx.pop_range(domain=domain)
        elif enabled:
            self.push = torch.cuda.nvtx.range_push
            self.pop = torch.cuda.nvtx.range_pop

    @contextlib.contextmanager
    def ranges(self, names):
        """Each of `names` pushed in order, popped in reverse on leaving."""
        for name in names:
            self.push(name)
        try:
            yield
        finally:
            for _ in names:
                self.pop()


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

    def __init__(self, args, kinds):
        self.starts = [args.warmup + w * (args.window + args.gap) for w in range(args.windows)]
        self.length = args.window
        self.windows = [{"steps": {kind: 0 for kind in kinds},
                         "prompt_tokens": {kind: 0 for kind in kinds},
                         "decode_tokens": {kind: 0 for kind in kinds}} for _ in self.starts]

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
    nvtx = Nvtx(torch, enabled=cuda, domain=args.nvtx_domain)
    names = KIND_NAMES[args.kind_names]
    counter = WindowCounter(args, kinds=tuple(names.values()))
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
            kind = names["mixed"] if admitted and running else (names["prefill"] if admitted else names["decode"])
            if cuda and counter.opens_at(step) and not window_open:
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                window_open = True
            prompt_tokens = sum(request["prompt"] for request in admitted)
            decode_tokens = len(running)
            around_step, around_forward, around_sampling = step_ranges(args.ranges, kind)
            with nvtx.ranges(around_step):
                with nvtx.ranges(around_forward):
                    tokens = torch.randint(0, model.embedding.shape[0], (prompt_tokens + decode_tokens,),
                                           device=device)
                    hidden = model.forward(tokens)
                with nvtx.ranges(around_sampling):
                    # One sampled token per sequence: the last position of each prompt, every decode position.
                    ends = [sum(r["prompt"] for r in admitted[: i + 1]) - 1 for i in range(len(admitted))]
                    ends += list(range(prompt_tokens, prompt_tokens + decode_tokens))
                    next_tokens = model.sample(hidden[torch.tensor(ends, device=device)])
                    next_tokens.cpu()  # the scheduler needs the tokens: one device-to-host copy per step
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
    kinds = [{kind: {"steps": steps, "prompt_tokens": window["prompt_tokens"][kind],
                     "decode_tokens": window["decode_tokens"][kind]} for kind, steps in window["steps"].items()}
             for window in windows]
    with open(path, "w") as out:
        json.dump({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": k} for k in kinds]}, out, indent=1)


def main(argv):
    args = parse_args(argv)
    rng = random.Random(args.seed)
    # The front process never imports torch, so no CUDA context exists here to be inherited by a fork.
    context = mp.get_context(args.start_method)
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
        counts = ", ".join(f"{kind}={count}" for kind, count in window["steps"].items())
        print(f"window {index} (steps {summary['window_starts'][index - 1]}..): {counts}")
    print(f"counts written to {args.counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
