#!/usr/bin/env python3
"""decode_eager.py: the PyTorch eager twin of llmprof-decode.

The same Llama-style decoder (RMSNorm, RoPE, grouped-query attention over a preallocated KV cache, SwiGLU MLP,
untied LM head, greedy argmax), the same flags and presets, the same NVTX ranges and the same metrics JSON
(schema "llmprof.workload_metrics/1"), so the C++ program and an ordinary Python loop can be profiled and
compared side by side. Weights are random (seeded); nothing is downloaded.

torch is imported lazily: `--help`, flag checks and `python3 -m py_compile` work where PyTorch is absent.
"""

import argparse
import json
import math
import os
import sys
import time

EXIT_SUCCESS, EXIT_RUNTIME_FAILURE, EXIT_USAGE = 0, 1, 2

# name -> (description, model sizes, run shape, dtype, device); kept equal to model_config.hpp.
PRESETS = {
    "tiny": ("CPU default, runs in about a second",
             dict(layers=4, hidden=256, heads=8, kv_heads=2, intermediate=688, vocab=4096, rope_theta=10000.0),
             dict(batch=1, prompt_len=64, new_tokens=32), "fp32", "cpu"),
    "1b": ("~1.1B parameters, Llama-3.2-1B-like shapes, bf16 on the GPU",
           dict(layers=16, hidden=2048, heads=32, kv_heads=8, intermediate=8192, vocab=32000, rope_theta=500000.0),
           dict(batch=1, prompt_len=512, new_tokens=128), "bf16", "cuda"),
}
RMS_EPSILON = 1e-5


# ---- analytic counts (same formulas as model_config.hpp) ------------------------------------------------------

def block_linear_parameters(c):
    head_dim = c["hidden"] // c["heads"]
    query_width, kv_width = c["heads"] * head_dim, c["kv_heads"] * head_dim
    return c["hidden"] * query_width + 2 * c["hidden"] * kv_width + query_width * c["hidden"] \
        + 3 * c["hidden"] * c["intermediate"]


def parameter_count(c):
    return 2 * c["vocab"] * c["hidden"] + c["layers"] * (block_linear_parameters(c) + 2 * c["hidden"]) + c["hidden"]


def flop_per_token(c, context, with_lm_head=True):
    """2 x linear weights (blocks + LM head) + 2*2*layers*hidden_q*context (QK^T and PV)."""
    linear = c["layers"] * block_linear_parameters(c) + (c["vocab"] * c["hidden"] if with_lm_head else 0)
    query_width = c["heads"] * (c["hidden"] // c["heads"])
    return 2.0 * linear + 4.0 * c["layers"] * query_width * context


def flop_per_prefill(c, prompt):
    """Sum over prompt positions (context p), LM head on the last position only."""
    return sum(flop_per_token(c, p, with_lm_head=False) for p in range(1, prompt + 1)) + 2.0 * c["vocab"] * c["hidden"]


def mean_decode_flop_per_token(c, prompt, new_tokens):
    """Decode step i feeds position prompt+i and attends to prompt+i+1 tokens."""
    return sum(flop_per_token(c, prompt + i + 1) for i in range(new_tokens)) / new_tokens


# ---- flags ----------------------------------------------------------------------------------------------------

def parse_flags(argv):
    parser = argparse.ArgumentParser(
        prog="decode_eager.py",
        description="PyTorch eager twin of llmprof-decode: Llama-style decoder, prefill + greedy decode with a "
                    "KV cache, NVTX ranges generate > prefill, decode > decode_step > attention/mlp/lm_head/sample.",
        epilog="Presets: " + "; ".join(f"{n}: {p[0]}" for n, p in PRESETS.items()) +
               ". Exit status: 0 success, 1 the run failed, 2 invalid flags or configuration.")
    parser.add_argument("--preset", default="tiny", help="tiny | 1b (default tiny); other flags override it")
    for name in ("layers", "hidden", "heads", "kv-heads", "intermediate", "vocab", "batch", "prompt-len",
                 "new-tokens"):
        parser.add_argument("--" + name, type=int, default=None)
    parser.add_argument("--dtype", default=None, help="fp32 | fp16 | bf16")
    parser.add_argument("--device", default=None, help="cpu | cuda | cuda:N")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--warmup", type=int, default=1, help="untimed, un-instrumented warm-up runs")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads for torch (0: torch's default)")
    parser.add_argument("--load-seconds", type=float, default=0.0,
                        help="wait this long before building the model, standing in for a checkpoint loaded from "
                             "disk (a Hugging Face 1B model: about 25 s), so that a profiler's start-up cost shows")
    parser.add_argument("--metrics-out", default=None,
                        help="metrics JSON path (default $LLMPROF_METRICS_FILE when set; the flag wins)")
    parser.add_argument("--nvtx-domain", default="", help="named NVTX domain (needs the `nvtx` Python package)")
    parser.add_argument("--torch-nvtx", action="store_true",
                        help="also emit PyTorch's per-operator NVTX ranges (torch.autograd.profiler.emit_nvtx)")
    args = parser.parse_args(argv)
    if args.preset not in PRESETS:
        parser.exit(EXIT_USAGE, f"decode_eager.py: error: unknown --preset '{args.preset}' (known: "
                                f"{', '.join(PRESETS)})\n")
    _, model, run, dtype, device = PRESETS[args.preset]
    config = dict(model)
    for key in ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab"):
        if getattr(args, key) is not None:
            config[key] = getattr(args, key)
    shape = dict(run)
    for key in ("batch", "prompt_len", "new_tokens"):
        if getattr(args, key) is not None:
            shape[key] = getattr(args, key)
    args.dtype = args.dtype or dtype
    args.device = args.device or device
    return args, config, shape


def check_flags(args, c, shape):
    """The same checks as llmprof-decode; returns an error text or None."""
    for name, value in (("--layers", c["layers"]), ("--hidden", c["hidden"]), ("--heads", c["heads"]),
                        ("--kv-heads", c["kv_heads"]), ("--intermediate", c["intermediate"]),
                        ("--vocab", c["vocab"]), ("--batch", shape["batch"]), ("--prompt-len", shape["prompt_len"]),
                        ("--new-tokens", shape["new_tokens"])):
        if value <= 0:
            return f"{name} must be positive, got {value}"
    if args.warmup < 0:
        return f"--warmup must be 0 or more, got {args.warmup}"
    if not args.load_seconds >= 0:  # also refuses nan
        return f"--load-seconds must be 0 or more, got {args.load_seconds}"
    if c["hidden"] % c["heads"]:
        return f"--hidden {c['hidden']} is not divisible by --heads {c['heads']} (each head gets hidden/heads dimensions)"
    if c["heads"] % c["kv_heads"]:
        return (f"--heads {c['heads']} is not divisible by --kv-heads {c['kv_heads']} (grouped-query attention "
                "shares each KV head among heads/kv-heads query heads)")
    if (c["hidden"] // c["heads"]) % 2:
        return f"head dimension hidden/heads = {c['hidden'] // c['heads']} is odd; rotary embeddings rotate pairs"
    if args.dtype not in ("fp32", "fp16", "bf16"):
        return f"--dtype must be fp32, fp16 or bf16, got '{args.dtype}'"
    device = args.device
    if not (device in ("cpu", "cuda") or (device.startswith("cuda:") and device[5:].isdigit())):
        return f"--device must be cpu, cuda or cuda:N, got '{device}'"
    return None


# ---- NVTX -----------------------------------------------------------------------------------------------------

class StageTracer:
    """Pushes/pops NVTX ranges (default domain through torch.cuda.nvtx, a named domain through the `nvtx`
    package) and remembers the names emitted. Inactive during warm-up."""

    def __init__(self, torch, domain):
        self.domain, self.active, self.emitted = domain, True, []
        self._push = self._pop = None
        if domain:
            import nvtx  # NVIDIA's nvtx package; checked in main() before any work
            self._push = lambda name: nvtx.push_range(name, domain=domain)
            self._pop = lambda: nvtx.pop_range(domain=domain)
        elif torch.cuda.is_available():
            self._push, self._pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop

    def range(self, name):
        return _Range(self, name)


class _Range:
    def __init__(self, tracer, name):
        self.tracer, self.name, self.pushed = tracer, name, False

    def __enter__(self):
        t = self.tracer
        if t.active and t._push is not None:
            t._push(self.name)
            self.pushed = True
            if self.name not in t.emitted:
                t.emitted.append(self.name)
        return self

    def __exit__(self, *exc):
        if self.pushed:
            self.tracer._pop()
        return False


# ---- the model ------------------------------------------------------------------------------------------------

class Decoder:
    def __init__(self, torch, c, dtype, device, max_positions):
        self.torch, self.c, self.dtype, self.device = torch, c, dtype, device
        self.head_dim = c["hidden"] // c["heads"]
        self.group = c["heads"] // c["kv_heads"]

        def weight(rows, columns):
            return (torch.randn(rows, columns, device=device, dtype=torch.float32) * 0.02).to(dtype)

        def ones():
            return torch.ones(c["hidden"], device=device, dtype=dtype)

        h, qw, kw = c["hidden"], c["heads"] * self.head_dim, c["kv_heads"] * self.head_dim
        # Same draw order as model.cpp (embedding, then per block q, k, v, o, gate, up, down, then LM head).
        self.embedding = weight(c["vocab"], h)
        self.blocks = []
        for _ in range(c["layers"]):
            self.blocks.append(dict(attention_norm=ones(), query=weight(qw, h), key=weight(kw, h), value=weight(kw, h),
                                    output=weight(h, qw), mlp_norm=ones(), gate=weight(c["intermediate"], h),
                                    up=weight(c["intermediate"], h), down=weight(h, c["intermediate"])))
        self.final_norm = ones()
        self.lm_head = weight(c["vocab"], h)
        exponents = torch.arange(0, self.head_dim, 2, dtype=torch.float64, device=device) / self.head_dim
        angles = torch.outer(torch.arange(max_positions, dtype=torch.float64, device=device),
                             torch.pow(c["rope_theta"], -exponents))
        doubled = torch.cat([angles, angles], -1)
        self.cos, self.sin = doubled.cos().float(), doubled.sin().float()

    def make_cache(self, batch, capacity):
        shape = (batch, self.c["kv_heads"], capacity, self.head_dim)
        z = self.torch.zeros
        return dict(keys=[z(shape, dtype=self.dtype, device=self.device) for _ in self.blocks],
                    values=[z(shape, dtype=self.dtype, device=self.device) for _ in self.blocks], length=0)

    def rms_norm(self, x, weight):
        x32 = x.float()
        return (x32 * self.torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + RMS_EPSILON)).to(x.dtype) * weight

    def rope(self, x, start):
        tokens, half = x.shape[2], x.shape[3] // 2
        cos = self.cos[start:start + tokens].to(x.dtype)
        sin = self.sin[start:start + tokens].to(x.dtype)
        return x * cos + self.torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def attention(self, layer, x, cache):
        torch, F, w = self.torch, self.torch.nn.functional, self.blocks[layer]
        b, t = x.shape[0], x.shape[1]
        start, kvh, d, g = cache["length"], self.c["kv_heads"], self.head_dim, self.group
        context = start + t
        q = self.rope(F.linear(x, w["query"]).view(b, t, self.c["heads"], d).transpose(1, 2), start)
        k = self.rope(F.linear(x, w["key"]).view(b, t, kvh, d).transpose(1, 2), start)
        v = F.linear(x, w["value"]).view(b, t, kvh, d).transpose(1, 2)
        cache["keys"][layer][:, :, start:context] = k
        cache["values"][layer][:, :, start:context] = v
        keys, values = cache["keys"][layer][:, :, :context], cache["values"][layer][:, :, :context]
        scores = torch.matmul(q.reshape(b, kvh, g * t, d), keys.transpose(-1, -2)) / math.sqrt(d)
        if t > 1:
            qpos = torch.arange(start, context, device=self.device).unsqueeze(1)
            kpos = torch.arange(0, context, device=self.device).unsqueeze(0)
            scores = scores.masked_fill((kpos > qpos).repeat(g, 1), float("-inf"))
        probabilities = torch.softmax(scores.float(), -1).to(self.dtype)
        mixed = torch.matmul(probabilities, values)
        return F.linear(mixed.view(b, kvh * g, t, d).transpose(1, 2).reshape(b, t, -1), w["output"])

    def mlp(self, layer, x):
        F, w = self.torch.nn.functional, self.blocks[layer]
        return F.linear(F.silu(F.linear(x, w["gate"])) * F.linear(x, w["up"]), w["down"])

    def forward(self, tokens, cache, tracer):
        hidden = self.torch.nn.functional.embedding(tokens, self.embedding)
        for layer, block in enumerate(self.blocks):
            with tracer.range("attention"):
                hidden = hidden + self.attention(layer, self.rms_norm(hidden, block["attention_norm"]), cache)
            with tracer.range("mlp"):
                hidden = hidden + self.mlp(layer, self.rms_norm(hidden, block["mlp_norm"]))
        cache["length"] += tokens.shape[1]
        with tracer.range("lm_head"):
            return self.torch.nn.functional.linear(self.rms_norm(hidden[:, -1], self.final_norm), self.lm_head)


def synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def generate(torch, model, prompt, new_tokens, tracer):
    """One prefill + greedy decode; each stage synchronises inside its range, as llmprof-decode does."""
    cache = model.make_cache(prompt.shape[0], prompt.shape[1] + new_tokens)
    generated = []
    synchronize(torch, model.device)
    with tracer.range("generate"):
        prefill_start = time.perf_counter()
        with tracer.range("prefill"):
            logits = model.forward(prompt, cache, tracer)
            with tracer.range("sample"):
                generated.append(logits.argmax(-1, keepdim=True))
            synchronize(torch, model.device)
        decode_start = time.perf_counter()
        with tracer.range("decode"):
            for _ in range(new_tokens):
                with tracer.range("decode_step"):
                    logits = model.forward(generated[-1], cache, tracer)
                    with tracer.range("sample"):
                        generated.append(logits.argmax(-1, keepdim=True))
            synchronize(torch, model.device)
        decode_end = time.perf_counter()
    return decode_start - prefill_start, decode_end - decode_start, torch.cat(generated, 1).cpu()


# ---- main -----------------------------------------------------------------------------------------------------

def check_with_torch(torch, args, c):
    """Device present and dtype usable on it: a two-token run of a minute model, as llmprof-decode does."""
    device = torch.device(args.device if args.device != "cuda" else "cuda:0")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            return None, f"--device {args.device}: no CUDA device is usable; use --device cpu"
        if device.index >= count:
            return None, f"--device {args.device}: only {count} CUDA device(s)"
    if args.nvtx_domain:
        try:
            import nvtx  # noqa: F401
        except ImportError:
            return None, "--nvtx-domain needs the `nvtx` Python package (pip install nvtx); torch.cuda.nvtx has no domains"
    if not args.nvtx_domain and device.type == "cuda" and not hasattr(torch.cuda, "nvtx"):
        return None, "this PyTorch has no torch.cuda.nvtx"
    dtype = dict(fp32=torch.float32, fp16=torch.float16, bf16=torch.bfloat16)[args.dtype]
    try:
        tiny = dict(layers=1, hidden=8, heads=2, kv_heads=1, intermediate=8, vocab=8, rope_theta=10000.0)
        probe = Decoder(torch, tiny, dtype, device, 4)
        tracer = StageTracer(torch, "")
        tracer.active = False
        probe.forward(torch.zeros(1, 2, dtype=torch.long, device=device), probe.make_cache(1, 4), tracer).argmax(-1)
        synchronize(torch, device)
    except RuntimeError as error:
        return None, (f"--dtype {args.dtype} is not supported on {args.device} by this PyTorch {torch.__version__} "
                      f"({str(error).splitlines()[0]})")
    return (device, dtype), None


def device_name(torch, device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def main(argv=None):
    args, c, shape = parse_flags(sys.argv[1:] if argv is None else argv)
    error = check_flags(args, c, shape)
    if error is None:
        try:
            import torch
        except ImportError:
            error = "PyTorch is not installed (pip install torch)"
    if error is None:
        checked, error = check_with_torch(torch, args, c)
    if error is not None:
        print(f"decode_eager.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    device, dtype = checked
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    if args.load_seconds > 0:
        time.sleep(args.load_seconds)  # no GPU work: a loading model launches no kernel for ncu to intercept
    torch.manual_seed(args.seed)
    torch.set_grad_enabled(False)
    batch, prompt_len, new_tokens = shape["batch"], shape["prompt_len"], shape["new_tokens"]
    model = Decoder(torch, c, dtype, device, prompt_len + new_tokens)
    prompt = torch.randint(0, c["vocab"], (batch, prompt_len), device=device)
    tracer = StageTracer(torch, args.nvtx_domain)
    tracer.active = False
    for _ in range(args.warmup):
        generate(torch, model, prompt, new_tokens, tracer)
    tracer.active = True
    if args.torch_nvtx:
        with torch.autograd.profiler.emit_nvtx():
            prefill_s, decode_s, tokens = generate(torch, model, prompt, new_tokens, tracer)
    else:
        prefill_s, decode_s, tokens = generate(torch, model, prompt, new_tokens, tracer)

    generated_tokens = batch * new_tokens
    where = f"cuda:{device.index}" if device.type == "cuda" else "cpu"
    name = device_name(torch, device)
    print(f"decode_eager.py: {parameter_count(c)} parameters, {args.dtype} on {where} ({name}), batch {batch}, "
          f"prompt {prompt_len}, new tokens {new_tokens}")
    print(f"prefill {prefill_s * 1e3:.3f} ms, decode {decode_s * 1e3:.3f} ms, "
          f"{decode_s / new_tokens * 1e3:.4f} ms per output token, {generated_tokens / decode_s:.2f} tokens/s")
    print("sequence 0 tokens:", " ".join(str(int(t)) for t in tokens[0][:16]), "..." if tokens.shape[1] > 16 else "")

    path = args.metrics_out or os.environ.get("LLMPROF_METRICS_FILE", "")
    if path:
        per_token = mean_decode_flop_per_token(c, prompt_len, new_tokens)
        metrics = {
            "schema": "llmprof.workload_metrics/1", "model": "llama-style", "device": where, "device_name": name,
            "dtype": args.dtype, "batch": batch, "prompt_tokens": prompt_len, "new_tokens": new_tokens,
            "layers": c["layers"], "hidden": c["hidden"], "heads": c["heads"], "kv_heads": c["kv_heads"],
            "intermediate": c["intermediate"], "vocab": c["vocab"], "parameters": parameter_count(c),
            "prefill_s": prefill_s, "decode_s": decode_s, "time_per_output_token_s": decode_s / new_tokens,
            "tokens_per_s": generated_tokens / decode_s, "generated_tokens": generated_tokens,
            "flop_per_prefill": flop_per_prefill(c, prompt_len), "flop_per_token": per_token,
            "decode_flop": per_token * generated_tokens, "nvtx_domain": args.nvtx_domain,
            "nvtx_ranges": tracer.emitted,
        }
        try:
            with open(path + ".tmp", "w") as out:
                json.dump(metrics, out, indent=2)
                out.write("\n")
            os.replace(path + ".tmp", path)
        except OSError as failure:
            print(f"decode_eager.py: error: metrics: cannot write '{path}': {failure}", file=sys.stderr)
            return EXIT_RUNTIME_FAILURE
        print(f"metrics written to {path}")
    return EXIT_SUCCESS


if __name__ == "__main__":
    sys.exit(main())
