#!/usr/bin/python3
"""The allocation stream behind src/load.c's step tables (--load
torchtune-0.1), read from the real code on the CPU.

    PYTHONPATH=TORCHTUNE:TORCHAO python3 calib/load_capture.py [LAYERS]

TORCHTUNE is pytorch/torchtune at fef3ed10dc9e (April 2024, torchtune
0.1: `git archive fef3ed1 torchtune`), TORCHAO torchao 0.1 (`pip install
--no-deps --target DIR torchao==0.1`); PyTorch 2.x from the test venv.
torchtune's package __init__ imports datasets, omegaconf, sentencepiece
and pkg_resources, which building a model never uses: modules of those
names may be stubs.  A development tool, not a test: its packages are
not pinned in requirements-test.txt.

It builds torchtune's QLoRA Llama-2-7B (lora_llama2 with every attention
projection and the MLP adapted, quantize_base=True, bf16, LAYERS layers,
default 1) under the profiler (profile_memory), lists the CPU
allocations and frees in time order, cuts out two quantized linears of
different shapes in the template block (q_proj 4096 x 4096, w1 11008 x
4096: their creation, nn.Linear then to_nf4) and in its deep copy
(dequantize, to_nf4 again), writes each event's size as a multiple of
the weight's numel n or of a LoRA matrix, or a constant, checks that
both linears give the same symbolic sequence, and prints the two tables
src/load.c holds.  With --stream FILE it also writes the stream ("a PTR
BYTES" / "f PTR" lines), which fed to the allocator simulation gives
what load.c's replay gives for the same model (one layer: allocated peak
3.536 GiB, reserved 4.283 GiB).

The segment bounds below are event numbers of the one-layer capture
(PyTorch 2.13): they move if the stream does, and the checks then fail.
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def capture(layers):
    from torchtune.models.llama2._component_builders import lora_llama2
    torch.set_default_dtype(torch.bfloat16)
    keep = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as p:
        keep.append(lora_llama2(
            ["q_proj", "v_proj", "k_proj", "output_proj"], True, False,
            vocab_size=32000, num_layers=layers, num_heads=32,
            num_kv_heads=32, embed_dim=4096, max_seq_len=4096,
            lora_rank=8, lora_alpha=16, lora_dropout=0.05,
            quantize_base=True))
    allocs = []

    def walk(n):
        if type(n.extra_fields).__name__ == "_ExtraFields_Allocation":
            ef = n.extra_fields
            if ef.device.type == "cpu":
                allocs.append((n.start_time_ns, len(allocs), ef.alloc_size,
                               ef.ptr))
        for c in n.children:
            walk(c)
    for root in p.profiler.kineto_results.experimental_event_tree():
        walk(root)
    allocs.sort()
    live, ev = {}, []
    for _, _, size, ptr in allocs:
        if size > 0:
            live[ptr] = size
            ev.append(("a", ptr, size))
        elif size < 0 and ptr in live:
            del live[ptr]
            ev.append(("f", ptr, 0))
    return ev


D, F, R = 4096, 11008, 8
# (first, last) event, 1-based, of the one-layer capture, with (in, out)
SEG = {"create": [(1, 73, D, D), (325, 397, D, F)],
       "clone": [(550, 676, D, D), (1065, 1191, D, F)]}
FRACS = [(1, 1), (2, 1), (4, 1), (8, 1), (32, 1), (1, 2), (1, 8), (1, 16),
         (1, 32), (1, 64), (1, 1024), (1, 2048), (1, 4096), (1, 8192)]


def forms(b, din, dout):
    n = din * dout
    out = {("N", a, c) for a, c in FRACS if n * a % c == 0 and
           n * a // c == b}
    if b == R * din * 2:
        out.add(("LA", 1, 1))
    if b == dout * R * 2:
        out.add(("LB", 1, 1))
    out.add(("ONE", b, 1))
    return out


def segment(ev, lo, hi):
    rows, slot = [], {}
    for op, ptr, size in ev[lo - 1:hi]:
        if op == "a":
            slot[ptr] = len(rows)
            rows.append(("a", size, -1))
        else:
            if ptr not in slot:
                sys.exit("a free of an allocation made outside the segment")
            rows.append(("f", 0, slot[ptr]))
    return rows


def main():
    args = sys.argv[1:]
    stream = None
    if "--stream" in args:
        i = args.index("--stream")
        stream = args[i + 1]
        del args[i:i + 2]
    layers = int(args[0]) if args else 1
    ev = capture(layers)
    if stream:
        with open(stream, "w") as f:
            for op, ptr, size in ev:
                f.write("a %d %d\n" % (ptr, size) if op == "a" else
                        "f %d\n" % ptr)
    if layers != 1:
        return
    for kind, ((l1, h1, i1, o1), (l2, h2, i2, o2)) in SEG.items():
        s1, s2 = segment(ev, l1, h1), segment(ev, l2, h2)
        if len(s1) != len(s2):
            sys.exit("%s: the two linears differ in length" % kind)
        print("static const struct step %s_steps[] = {" % kind)
        for (op1, b1, r1), (op2, b2, r2) in zip(s1, s2):
            if op1 != op2 or r1 != r2:
                sys.exit("%s: the two linears differ" % kind)
            if op1 == "f":
                print("\t{ 'f', %d, U_ONE, 0, 1 }," % r1)
                continue
            f = sorted(forms(b1, i1, o1) & forms(b2, i2, o2))
            f = [x for x in f if x[0] != "ONE"] or f
            if not f:
                sys.exit("%s: no common form for %d and %d" % (kind, b1, b2))
            u, a, c = f[0]
            print("\t{ 'a', -1, U_%s, %d, %d }," % (u, a, c))
        print("};")


if __name__ == "__main__":
    main()
