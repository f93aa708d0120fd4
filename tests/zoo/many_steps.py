#!/usr/bin/env python3
"""A decode whose one `decode` NVTX range holds many steps, as a benchmark loop often has.

--step-ranges: each step also sits in its own `decode_step` range inside `decode` (a range holding N step
ranges); without it `decode` holds N forward passes and nothing marks them. --graphs: each step replays one
captured CUDA graph (a range holding N graph launches). A `prefill` range comes first. Each step ends with the
next token copied to the host (--async-steps: only the last). Writes --facts (JSON) with the step count and the model's weight bytes, so an
oracle knows what one step is.
"""
import argparse
import json


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=48)
    parser.add_argument("--step-ranges", action="store_true")
    parser.add_argument("--graphs", action="store_true")
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--async-steps", action="store_true",
                        help="no per-step copy to the host: a step range closes as soon as its work is queued, as a "
                             "CUDA-graph decode loop that synchronises only at its end does")
    parser.add_argument("--facts", default="many_steps_facts.json")
    args = parser.parse_args()

    import torch
    nvtx = torch.cuda.nvtx
    torch.manual_seed(0)
    h = args.hidden
    weights = [(torch.randn(h, 4 * h, device="cuda", dtype=torch.bfloat16) / h ** 0.5,
                torch.randn(4 * h, h, device="cuda", dtype=torch.bfloat16) / (4 * h) ** 0.5)
               for _ in range(args.layers)]
    head = torch.randn(h, 16384, device="cuda", dtype=torch.bfloat16) / h ** 0.5
    embedding = torch.randn(16384, h, device="cuda", dtype=torch.bfloat16)

    def forward(x):
        for up, down in weights:
            x = x + torch.nn.functional.silu(x @ up) @ down
        return (x @ head).argmax(dim=-1)

    tokens = torch.zeros(args.batch, dtype=torch.long, device="cuda")
    static_x = embedding[tokens]
    graph = None
    with torch.no_grad():
        if args.graphs:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    forward(static_x)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                graph_out = forward(static_x)
        prompt = embedding[torch.randint(0, 16384, (args.batch, 256), device="cuda")]
        for _ in range(2):  # warm-up
            forward(prompt)
            forward(static_x)
        torch.cuda.synchronize()
        nvtx.range_push("prefill")
        forward(prompt).cpu()
        nvtx.range_pop()
        nvtx.range_push("decode")
        for _ in range(args.steps):
            if args.step_ranges:
                nvtx.range_push("decode_step")
            if graph is not None:
                static_x.copy_(embedding[tokens])
                graph.replay()
                out = graph_out
            else:
                out = forward(embedding[tokens])
            tokens = out.clone()
            if not args.async_steps:
                tokens.cpu()
            if args.step_ranges:
                nvtx.range_pop()
        nvtx.range_pop()
        torch.cuda.synchronize()
    weight_bytes = sum(up.numel() + down.numel() for up, down in weights) * 2 + head.numel() * 2
    facts = dict(workload="many_steps", steps=args.steps, step_ranges=args.step_ranges, graphs=args.graphs, async_steps=args.async_steps,
                 weight_bytes_per_step=weight_bytes, batch=args.batch)
    with open(args.facts, "w") as handle:
        json.dump(facts, handle, indent=1)
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
