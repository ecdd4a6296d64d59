#!/usr/bin/python3
"""Bytes moved by the memory-bound kernels of one decoder block.

The time model (src/plan_search.c, EW_*) charges a block's elementwise
kernels -- norms, RoPE, the MLP activation, residual adds, dtype casts and
their backward -- at the card's memory bandwidth.  This measures their
traffic the way eager PyTorch runs them: one transformers block in bf16
on the CPU, forward and backward, under a TorchDispatchMode that adds the
bytes of every aten op's tensor inputs and outputs, leaving out matmuls,
attention kernels, embeddings and views.  Two ffn sizes at one hidden size
separate the per-h and per-ffn parts.

    build/.venv-test/bin/python calib/elementwise_bytes.py

Measured with PyTorch 2.13 and transformers 5.24 (hidden 512, 8 heads,
2 x 256 tokens): Llama forward and backward 428 h + 28 ffn bytes per token
and layer, forward alone 125 h + 10 ffn; GPT-2's block (GELU-tanh, ffn
4h) 458 h in all.  The loss after the head's matmul (cross_entropy,
forward and backward; 512 tokens, vocabulary 8192): 44 bytes per token
and vocabulary entry with the logits upcast to fp32, 16 without.
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# Not memory-bound elementwise work: the time model costs these apart.
SKIP = {
    "mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "embedding",
    "embedding_dense_backward",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention",
    # views move nothing
    "view", "_unsafe_view", "reshape", "transpose", "t", "permute",
    "expand", "unsqueeze", "squeeze", "slice", "select", "split",
    "split_with_sizes", "as_strided", "detach", "alias", "unbind",
    "chunk", "view_as_complex", "view_as_real", "_reshape_alias",
    "lift_fresh",
}
H, S, B = 512, 256, 2


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in SKIP:
            return out
        ts = [t for t in tree_flatten((args, kwargs, out))[0]
              if isinstance(t, torch.Tensor) and t.dim() > 0]
        self.bytes += sum(t.numel() * t.element_size() for t in ts)
        return out


def llama(ffn, backward):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import (
        LlamaDecoderLayer, LlamaRotaryEmbedding)
    cfg = LlamaConfig(hidden_size=H, intermediate_size=ffn,
                      num_attention_heads=8, num_key_value_heads=8,
                      attn_implementation="sdpa")
    layer = LlamaDecoderLayer(cfg, 0).to(torch.bfloat16)
    x = torch.randn(B, S, H, dtype=torch.bfloat16, requires_grad=True)
    pos = torch.arange(S)[None].expand(B, S)
    pe = LlamaRotaryEmbedding(cfg)(x, pos)
    c = Count()
    with c:
        o = layer(x, position_embeddings=pe, attention_mask=None,
                  position_ids=pos)
        o = o[0] if isinstance(o, tuple) else o
        if backward:
            o.float().sum().backward()
    return c.bytes / (B * S) / H


def gpt2():
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block
    cfg = GPT2Config(n_embd=H, n_head=8, attn_implementation="sdpa",
                     resid_pdrop=0, attn_pdrop=0, embd_pdrop=0)
    layer = GPT2Block(cfg, 0).to(torch.bfloat16)
    x = torch.randn(B, S, H, dtype=torch.bfloat16, requires_grad=True)
    c = Count()
    with c:
        o = layer(x)
        o = o[0] if isinstance(o, tuple) else o
        o.float().sum().backward()
    return c.bytes / (B * S) / H


def split(backward):
    """Per-h and per-ffn bytes from two ffn sizes (2 h and 4 h)."""
    a, b = llama(2 * H, backward), llama(4 * H, backward)
    per_ffn = (b - a) / 2.0
    return a - 2.0 * per_ffn, per_ffn


def loss(upcast):
    """The loss's bytes per token and vocabulary entry."""
    n, v, h = 512, 8192, 256
    x = torch.randn(n, h, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(v, h, dtype=torch.bfloat16, requires_grad=True)
    y = torch.randint(0, v, (n,))
    c = Count()
    with c:
        logits = x @ w.t()
        if upcast:
            logits = logits.float()
        torch.nn.functional.cross_entropy(logits, y).backward()
    return c.bytes / n / v


if __name__ == "__main__":
    torch.manual_seed(0)
    h, f = split(True)
    print("llama forward+backward: %.0f h + %.1f ffn bytes/token/layer" % (h, f))
    h, f = split(False)
    print("llama forward:          %.0f h + %.1f ffn bytes/token/layer" % (h, f))
    print("gpt2 forward+backward:  %.0f h (ffn 4h)" % gpt2())
    print("loss, fp32 logits:      %.0f bytes/token/vocab entry" % loss(True))
    print("loss, bf16 logits:      %.0f bytes/token/vocab entry" % loss(False))
