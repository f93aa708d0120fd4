#!/usr/bin/env python3
"""A Hugging Face `generate()` decode, as a user would write it: no NVTX of its own.

A random-init Llama (transformers' LlamaConfig, nothing downloaded) generates --new-tokens tokens greedily
after a warm-up call. With --window the measured call is wrapped in torch.cuda.profiler.start()/stop()
(cudaProfilerStart/Stop), the only profiling hook many scripts have; without it the script has neither ranges
nor a window. --cache static asks for transformers' static cache (which may compile the forward itself).

Writes --facts (JSON): the shape of the measured call, so an oracle over the capture knows how many forward
passes there were: 1 prefill + (new_tokens - 1) decode passes (the last token needs no forward of its own).
"""
import argparse
import json
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache", choices=("dynamic", "static"), default="dynamic")
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--prompt", type=int, default=32, help="prompt tokens")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--window", action="store_true", help="cudaProfilerStart/Stop around the measured call")
    parser.add_argument("--load-seconds", type=float, default=0.0, help="extra start-up, as a model load would take")
    parser.add_argument("--facts", default="hf_generate_facts.json")
    args = parser.parse_args()

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=args.hidden, intermediate_size=args.hidden * 4 // 3 * 2,
                         num_hidden_layers=args.layers, num_attention_heads=max(1, args.hidden // 64),
                         num_key_value_heads=max(1, args.hidden // 256), vocab_size=8192,
                         max_position_embeddings=max(256, args.prompt + args.new_tokens + 8))
    model = LlamaForCausalLM(config).to(device="cuda", dtype=torch.bfloat16).eval()
    if args.load_seconds > 0:
        time.sleep(args.load_seconds)
    ids = torch.randint(1, config.vocab_size, (args.batch, args.prompt), device="cuda")
    kwargs = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0)
    if args.cache == "static":
        kwargs["cache_implementation"] = "static"
    else:
        kwargs["disable_compile"] = True
    with torch.no_grad():
        model.generate(ids, **kwargs)  # warm-up: allocator, kernels' first launches, a compile if any
        torch.cuda.synchronize()
        if args.window:
            torch.cuda.profiler.start()
        started = time.perf_counter()
        out = model.generate(ids, **kwargs)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        if args.window:
            torch.cuda.profiler.stop()
    generated = out.shape[1] - args.prompt
    facts = dict(workload="hf_generate", cache=args.cache, window=args.window, new_tokens=generated,
                 prompt_tokens=args.prompt, batch=args.batch, layers=args.layers, hidden=args.hidden,
                 forward_passes=generated, prefill_passes=1, decode_passes=generated - 1,
                 measured_seconds=round(seconds, 4))
    with open(args.facts, "w") as handle:
        json.dump(facts, handle, indent=1)
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
