#!/usr/bin/python3
"""vramplan calibration harness: measure the memory of real PyTorch training steps.

    /usr/bin/python3 calib/harness.py MODEL.yaml [--device cpu|cuda]
        [--precision fp32|bf16-mixed|fp16-mixed|bf16|fp16]
        [--optimizer sgd|sgd-momentum|adam|adamw] [--micro-batch B] [--seq S]
        [--recompute none|full|op] [--recompute-stride N] [--attention eager|sdpa] [--dropout P]
        [--lora R] [--lora-targets q,v|all-linear|...] [--lora-alpha A]
        [--lora-dropout P] [--lora-dtype fp32|bf16]
        [--loss full|chunked|chunked-output]
        [--optimizer-impl I] [--optimizer-in-backward]
        [--compile none|blocks|blocks+loss] [--activation-offload]
        [--steps 2] [--seed 0] [--threads 2] [--trace]
        [--quant none|nf4]   (torchtune's QLoRA base: torchao's NF4Tensor, needs torchao)
        [--float8 none|tensorwise|rowwise]   (needs torchao, and on the CPU
        DNNL_MAX_CPU_ISA=ONEDNN_MAX_CPU_ISA=AVX512_CORE_FP16: oneDNN's fp8
        matmul has no kernel below it; the default cap is AVX512_CORE_BF16)

prints ONE JSON object on stdout (the human-readable --trace goes to stderr).
As a module:  measure(model_cfg: dict, **opts) -> dict  (same keys).

The model is rebuilt from the vramplan YAML description with plain torch.nn
modules that mirror, in what autograd saves, the Hugging Face transformers
v4.40.x implementations (LlamaForCausalLM, GPT2LMHeadModel, BertForMaskedLM)
or torch.nn.TransformerEncoderLayer.  See calib/README.md for the method
(CPU: exact replay of the profiler's allocator events; CUDA: the caching
allocator's counters per phase) and for what each op saves.
"""

import argparse
import contextlib
import gc
import json
import math
import os
import sys
import time

try:
    import yaml
except ImportError:  # pragma: no cover
    yaml = None

# oneDNN picks its CPU kernels by instruction set, and its AMX kernels
# (Sapphire Rapids and later) keep a reordered copy of a bf16 matmul's
# weight that no other kernel, and no GPU, allocates: measured on the
# chunked-loss LoRA case, +260 KiB (266,240 B) on a 3.9 MiB step, 6.6%.
# The CPU measurements stand in for PyTorch's accounting, not for one
# CPU's kernel choice, so they are taken with AMX off on every machine
# (an explicit DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA in the environment
# wins).  This must happen before torch is imported.
for _isa_var in ("DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA"):
    os.environ.setdefault(_isa_var, "AVX512_CORE_BF16")

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.checkpoint as _ckpt
except ImportError as _e:  # pragma: no cover
    if __name__ == "__main__":
        sys.stderr.write("harness: torch is not importable by %s (%s); use /usr/bin/python3\n" % (sys.executable, _e))
        sys.exit(2)
    raise ImportError("calib/harness.py needs torch (use /usr/bin/python3): %s" % _e)

HARNESS_VERSION = 1
PHASES = ("forward", "loss", "backward", "optimizer", "zero_grad")
MARK_PREFIX = "vramplan:"

# Memory-efficient attention kernel (torch < 2.0): rows of the score matrix
# are processed in blocks of `rows` with b*h*rows*keys <= ATTN_BLOCK_ELEMS,
# so every per-block temporary is at most ATTN_BLOCK_ELEMS elements.
ATTN_BLOCK_ELEMS = 1 << 14

PRECISIONS = ("fp32", "bf16-mixed", "fp16-mixed", "bf16", "fp16")
OPTIMIZERS = ("sgd", "sgd-momentum", "adam", "adamw")
LOSSES = ("full", "chunked", "chunked-output")

# torchtune's CEWithChunkedOutputLoss (--loss chunked-output): the head
# runs on num_output_chunks pieces of the sequence, all kept, and the loss
# upcasts and takes the cross-entropy of one piece at a time.
TT_OUTPUT_CHUNKS = 8

# torch.compile (Inductor) as torchtune's compile_model does it: every
# decoder layer compiled on its own (nn.Module.compile, in place, so a
# checkpoint wrapper stays outside the compiled region); "blocks+loss" also
# compiles the cross-entropy on the shifted fp32 logits (compile_loss), or
# with --loss chunked-output each chunk's upcast and cross-entropy.
# "wrapped" and "wrapped+loss" are torchtitan's order instead (apply_ac,
# then apply_compile): each block is wrapped in ptd_checkpoint_wrapper
# first (with the op-level policy's context under --recompute op) and the
# wrapper is compiled (torch.compile(block, fullgraph=True)), so the
# checkpoint is inside the compiled region and AOTAutograd partitions it
# by the policy's tags.
COMPILE_MODES = ("none", "blocks", "blocks+loss", "wrapped", "wrapped+loss")
# --quant: "nf4" is torchtune's QLoRA base, torchao's NF4Tensor (to_nf4
# with the default 64-element blocks and 256-block scaler groups) run by
# linear_nf4 (see NF4Linear).
QUANTS = ("none", "nf4")
_NF4_LINEAR = [None]

# LoRA targets (vramplan's names) in canonical order; "all-linear" = every one
# of them the model has.
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down", "head")
LORA_DTYPES = {"fp32": "float32", "bf16": "bfloat16"}

# Chunked (fused linear) cross-entropy: the per-row log-softmax/gradient
# "kernel" upcasts rows to fp32 in blocks of at most this many elements (at
# least one row).  On a GPU these values live in registers (Liger's Triton
# kernel); on CPU they are a small real workspace, like ATTN_BLOCK_ELEMS.
CE_BLOCK_ELEMS = 1 << 14


class HarnessError(Exception):
    """A configuration the harness cannot (or refuses to) run."""


# ----------------------------------------------------------------------------
# model description
# ----------------------------------------------------------------------------

def load_model_cfg(path):
    if yaml is None:
        raise HarnessError("PyYAML is not installed (use /usr/bin/python3)")
    with open(path) as f:
        cfg = yaml.safe_load(f)
    if not isinstance(cfg, dict):
        raise HarnessError("%s: not a YAML mapping" % path)
    return cfg


def _as_bool(v, default):
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "yes", "on")
    return bool(v)


def normalize_cfg(raw):
    """Fill the schema defaults and validate; returns a new dict."""
    if raw.get("moe"):
        raise HarnessError("moe models are not supported by the calibration harness")
    c = {}
    c["name"] = str(raw.get("name", "model"))
    c["architecture"] = str(raw.get("architecture", "decoder")).lower()
    if c["architecture"] not in ("decoder", "encoder"):
        raise HarnessError("architecture must be decoder or encoder, got %r" % c["architecture"])
    for k in ("layers", "hidden", "heads", "ffn", "vocab"):
        if k not in raw:
            raise HarnessError("model description lacks %r" % k)
        c[k] = int(raw[k])
    c["kv_heads"] = int(raw.get("kv_heads") or c["heads"])
    c["head_dim"] = int(raw.get("head_dim") or c["hidden"] // c["heads"])
    if c["heads"] % c["kv_heads"]:
        raise HarnessError("heads must be a multiple of kv_heads")
    c["activation"] = str(raw.get("activation", "gelu")).lower()
    if c["activation"] not in ("gelu", "gelu-tanh", "gelu-new", "relu", "swiglu", "geglu"):
        raise HarnessError("unknown activation %r" % c["activation"])
    c["norm"] = str(raw.get("norm", "layernorm")).lower()
    if c["norm"] not in ("layernorm", "rmsnorm"):
        raise HarnessError("unknown norm %r" % c["norm"])
    c["bias"] = _as_bool(raw.get("bias"), False)
    c["qkv_bias"] = _as_bool(raw.get("qkv_bias"), c["bias"])
    c["post_norms"] = _as_bool(raw.get("post_norms"), False)
    c["tie_embeddings"] = _as_bool(raw.get("tie_embeddings"), False)
    default_pos = "rope" if c["architecture"] == "decoder" else "learned"
    c["position"] = str(raw.get("position", default_pos)).lower()
    if c["position"] not in ("rope", "learned", "none"):
        raise HarnessError("unknown position %r" % c["position"])
    c["max_seq"] = int(raw.get("max_seq") or 2048)
    c["type_vocab"] = int(raw.get("type_vocab") or 0)
    c["dropout"] = float(raw.get("dropout") or 0.0)
    c["implementation"] = str(raw.get("implementation", "hf")).lower()
    if c["implementation"] not in ("hf", "torch-nn", "megatron"):
        raise HarnessError("unknown implementation %r" % c["implementation"])
    if c["implementation"] == "megatron":
        raise HarnessError("implementation megatron is not reproduced by the harness (hf and torch-nn only)")
    tr = raw.get("training") or {}
    c["training"] = {
        "micro_batch": int(tr.get("micro_batch", 1)),
        "seq": int(tr.get("seq", min(c["max_seq"], 512))),
        "precision": str(tr.get("precision", "fp32")),
        "optimizer": str(tr.get("optimizer", "adamw")),
    }
    return c


def model_family(c):
    """Which reference implementation the description maps to."""
    if c["implementation"] == "torch-nn":
        return "torch-nn"
    if c["architecture"] == "encoder":
        return "bert"
    gated = c["activation"] in ("swiglu", "geglu")
    if (c["norm"] == "layernorm" and c["position"] in ("learned", "none") and not gated
            and c["kv_heads"] == c["heads"] and c["head_dim"] * c["heads"] == c["hidden"]
            and not c["post_norms"]):
        return "gpt2"
    return "llama"


# ----------------------------------------------------------------------------
# phase markers (allocation-free profiler ranges + hooks for the CUDA meter)
# ----------------------------------------------------------------------------

_PHASE_HOOKS = []
_STEP = [0]


@contextlib.contextmanager
def phase(name):
    """Marks a phase of the training step.  On CPU the range is a profiler
    user scope.  `_record_function_enter_new` does not allocate (the classic
    torch.profiler.record_function of torch 1.13 allocates a 4-byte handle
    tensor and a 288-byte temporary on every entry, which would pollute the
    allocation stream)."""
    for h in _PHASE_HOOKS:
        h("enter", name)
    label = "%s%s:%d" % (MARK_PREFIX, name, _STEP[0])
    handle = None
    ops = torch.ops.profiler
    if hasattr(ops, "_record_function_enter_new"):
        handle = ops._record_function_enter_new(label, None)
        exit_fn = ops._record_function_exit._RecordFunction
    else:  # pragma: no cover - very old torch
        rf = torch.autograd.profiler.record_function(label)
        rf.__enter__()
        handle = rf
        exit_fn = None
    try:
        yield
    finally:
        if exit_fn is not None:
            exit_fn(handle)
        else:  # pragma: no cover
            handle.__exit__(None, None, None)
        for h in _PHASE_HOOKS:
            h("exit", name)


# ----------------------------------------------------------------------------
# attention kernels
# ----------------------------------------------------------------------------

_SDPA_SEED = [0]


def _block_rows(b, h, s, sk):
    return max(1, min(s, ATTN_BLOCK_ELEMS // max(1, b * h * sk)))


def _causal_mask_(sc, r0, r1):
    # columns r0..r1-1 of rows r0..r1-1: mask the strict upper triangle
    n = r1 - r0
    if n > 1:
        tri = torch.ones((n, n), dtype=torch.bool, device=sc.device).triu_(1)
        sc[..., r0:r1].masked_fill_(tri, float("-inf"))


class MemEffAttention(torch.autograd.Function):
    """Memory-efficient attention for torch < 2.0 (no F.scaled_dot_product_attention).

    Memory behaviour of FlashAttention / SDPA's efficient kernels: forward
    saves only q, k, v, the output and the per-row log-sum-exp (fp32,
    shape (b, h, s)); the probabilities are recomputed blockwise in backward;
    dropout masks are regenerated from a seed (no mask is kept).  The output
    is allocated in the (b, s, h, d) layout the CUDA kernels use, so HF's
    `attn_output.transpose(1, 2).contiguous()` does not copy.
    Per-block temporaries are bounded by ATTN_BLOCK_ELEMS elements each."""

    @staticmethod
    def forward(ctx, q, k, v, causal, dropout_p, scale, seed):
        b, h, s, _ = q.shape
        sk = k.shape[2]
        dv = v.shape[3]
        with torch.autocast(q.device.type, enabled=False):
            out_bshd = torch.empty((b, s, h, dv), dtype=q.dtype, device=q.device)
            out = out_bshd.transpose(1, 2)
            lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
            gen = None
            if dropout_p > 0:
                gen = torch.Generator(device=q.device)
                gen.manual_seed(seed)
            blk = _block_rows(b, h, s, sk)
            kt = k.transpose(-2, -1)
            for r0 in range(0, s, blk):
                r1 = min(s, r0 + blk)
                c1 = r1 if causal else sk
                sc = torch.matmul(q[:, :, r0:r1], kt[..., :c1]).float()
                sc.mul_(scale)
                if causal:
                    _causal_mask_(sc, r0, r1)
                m = sc.amax(-1, keepdim=True)
                sc.sub_(m).exp_()
                l = sc.sum(-1, keepdim=True)
                sc.div_(l)
                lse[:, :, r0:r1] = l.log_().add_(m).squeeze(-1)
                del l, m
                if gen is not None:
                    keep = torch.empty_like(sc).bernoulli_(1.0 - dropout_p, generator=gen)
                    sc.mul_(keep).div_(1.0 - dropout_p)
                    del keep
                out[:, :, r0:r1] = torch.matmul(sc.to(v.dtype), v[:, :, :c1])
                del sc
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal, ctx.dropout_p, ctx.scale, ctx.seed = causal, dropout_p, scale, seed
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        causal, p_drop, scale = ctx.causal, ctx.dropout_p, ctx.scale
        b, h, s, _ = q.shape
        sk = k.shape[2]
        with torch.autocast(q.device.type, enabled=False):
            dq = torch.empty_like(q)
            dk = torch.zeros_like(k)
            dv = torch.zeros_like(v)
            gen = None
            if p_drop > 0:
                gen = torch.Generator(device=q.device)
                gen.manual_seed(ctx.seed)
            blk = _block_rows(b, h, s, sk)
            kt = k.transpose(-2, -1)
            for r0 in range(0, s, blk):
                r1 = min(s, r0 + blk)
                c1 = r1 if causal else sk
                p = torch.matmul(q[:, :, r0:r1], kt[..., :c1]).float()
                p.mul_(scale)
                if causal:
                    _causal_mask_(p, r0, r1)
                p.sub_(lse[:, :, r0:r1].unsqueeze(-1)).exp_()
                do = dout[:, :, r0:r1]
                dd = (do.float() * out[:, :, r0:r1].float()).sum(-1, keepdim=True)
                dp = torch.matmul(do, v[:, :, :c1].transpose(-2, -1)).float()
                if gen is not None:
                    keep = torch.empty_like(p).bernoulli_(1.0 - p_drop, generator=gen)
                    keep.div_(1.0 - p_drop)
                    dv[:, :, :c1] += torch.matmul((p * keep).transpose(-2, -1).to(v.dtype), do)
                    dp.mul_(keep)
                    del keep
                else:
                    dv[:, :, :c1] += torch.matmul(p.transpose(-2, -1).to(v.dtype), do)
                dp.sub_(dd).mul_(p)          # dS = P * (dP - D)
                del p, dd
                ds = dp.to(q.dtype)
                del dp
                dq[:, :, r0:r1] = torch.matmul(ds, k[:, :, :c1]).mul_(scale)
                dk[:, :, :c1] += torch.matmul(ds.transpose(-2, -1), q[:, :, r0:r1]).mul_(scale)
                del ds
        return dq, dk, dv, None, None, None, None


def sdpa(q, k, v, causal, dropout_p, training):
    """The `--attention sdpa` path: torch's fused kernel where it exists
    (torch >= 2.0), else the MemEffAttention function above."""
    p = dropout_p if training else 0.0
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=p, is_causal=causal)
    _SDPA_SEED[0] += 1
    return MemEffAttention.apply(q, k, v, causal, p, 1.0 / math.sqrt(q.shape[-1]), _SDPA_SEED[0])


def sdpa_impl_name():
    if torch is not None and hasattr(F, "scaled_dot_product_attention"):
        return "torch.nn.functional.scaled_dot_product_attention"
    return "memeff-autograd-function"


# ----------------------------------------------------------------------------
# building blocks mirroring transformers v4.40.x
# ----------------------------------------------------------------------------

def _dropout(x, p, training):
    # nn.Dropout / F.dropout; p == 0 returns the input itself (no node)
    return F.dropout(x, p=p, training=training)


def gelu_new(x):
    # transformers.activations.NewGELUActivation (GPT-2's gelu_new):
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_tanh(x):
    # PytorchGELUTanh (Gemma's gelu_pytorch_tanh): one fused op
    return F.gelu(x, approximate="tanh")


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LayerNorm(nn.LayerNorm):
    """nn.LayerNorm.  Under autocast, CUDA runs layer_norm in fp32 (autocast
    fp32 op list) while CPU autocast of torch 1.13 leaves it alone, and the CPU
    kernel then rejects a bf16 input with fp32 weights ("expected scalar type
    BFloat16 but found Float": e.g. BERT's MLM-head LayerNorm after a bf16
    dense+gelu).  We apply CUDA's policy there: the input is cast to the
    weight dtype.  Inputs that already match (the fp32 residual stream in
    GPT-2/BERT blocks) are untouched."""

    def forward(self, x):
        if self.weight is not None and x.dtype != self.weight.dtype and _autocast_enabled(x.device.type):
            x = x.to(self.weight.dtype)
        return super().forward(x)


def _autocast_enabled(device_type):
    if device_type == "cpu":
        return torch.is_autocast_cpu_enabled()
    return torch.is_autocast_enabled()


def make_norm(c, dim, eps=None):
    if c["norm"] == "rmsnorm":
        return LlamaRMSNorm(dim, eps=1e-6 if eps is None else eps)
    return LayerNorm(dim, eps=1e-5 if eps is None else eps)


class LlamaRotaryEmbedding(nn.Module):
    """v4.40 LlamaRotaryEmbedding.forward (per attention layer).  The
    deprecated `_cos_cached`/`_sin_cached` buffers of v4.40 (never read by
    forward, removed later) are omitted."""

    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.dim = dim
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        with torch.autocast(device_type=x.device.type, enabled=False):
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos()
            sin = emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


# ---- Llama family (LlamaForCausalLM; also gelu/relu/geglu MLPs, LayerNorm,
# ---- learned or no positions, Gemma-2 sandwich norms, untied heads)

class DecoderAttention(nn.Module):
    def __init__(self, c, attention):
        super().__init__()
        self.hidden_size = c["hidden"]
        self.num_heads = c["heads"]
        self.head_dim = c["head_dim"]
        self.num_key_value_heads = c["kv_heads"]
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.attention_dropout = c["dropout"]
        self.attention = attention
        self.use_rope = c["position"] == "rope"
        qb = c["qkv_bias"]
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=qb)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=qb)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=qb)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=c["bias"])
        if self.use_rope:
            self.rotary_emb = LlamaRotaryEmbedding(self.head_dim)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        if self.use_rope:
            cos, sin = self.rotary_emb(value_states, position_ids)
            query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        if self.attention == "sdpa":
            # LlamaSdpaAttention: no mask -> is_causal=True
            attn_output = sdpa(query_states, key_states, value_states, True,
                               self.attention_dropout, self.training)
        else:
            attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
            if attention_mask is not None:
                causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
                attn_weights = attn_weights + causal_mask
            # upcast attention to fp32
            attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
            attn_weights = F.dropout(attn_weights, p=self.attention_dropout, training=self.training)
            attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, self.num_heads * self.head_dim)
        return self.o_proj(attn_output)


class DecoderMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.act = c["activation"]
        h, f, b = c["hidden"], c["ffn"], c["bias"]
        if self.act in ("swiglu", "geglu"):
            self.gate_proj = nn.Linear(h, f, bias=b)
        self.up_proj = nn.Linear(h, f, bias=b)
        self.down_proj = nn.Linear(f, h, bias=b)

    def forward(self, x):
        if self.act == "swiglu":      # LlamaMLP, act_fn = SiLU
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        if self.act == "geglu":       # GemmaMLP, gelu_pytorch_tanh
            return self.down_proj(gelu_tanh(self.gate_proj(x)) * self.up_proj(x))
        if self.act == "gelu":
            return self.down_proj(F.gelu(self.up_proj(x)))
        if self.act == "gelu-tanh":
            return self.down_proj(gelu_tanh(self.up_proj(x)))
        if self.act == "gelu-new":
            return self.down_proj(gelu_new(self.up_proj(x)))
        return self.down_proj(F.relu(self.up_proj(x)))


class DecoderLayer(nn.Module):
    def __init__(self, c, attention):
        super().__init__()
        self.self_attn = DecoderAttention(c, attention)
        self.mlp = DecoderMLP(c)
        self.input_layernorm = make_norm(c, c["hidden"])
        self.post_attention_layernorm = make_norm(c, c["hidden"])
        self.post_norms = c["post_norms"]
        if self.post_norms:           # Gemma-2 sandwich norms
            self.pre_feedforward_layernorm = make_norm(c, c["hidden"])
            self.post_feedforward_layernorm = make_norm(c, c["hidden"])

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask, position_ids)
        if self.post_norms:
            hidden_states = self.post_attention_layernorm(hidden_states)
            hidden_states = residual + hidden_states
            residual = hidden_states
            hidden_states = self.pre_feedforward_layernorm(hidden_states)
            hidden_states = self.mlp(hidden_states)
            hidden_states = self.post_feedforward_layernorm(hidden_states)
        else:
            hidden_states = residual + hidden_states
            residual = hidden_states
            hidden_states = self.post_attention_layernorm(hidden_states)
            hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


def _run_layers(layers, recompute, hidden_states, *args):
    """recompute: 0 (or False) keeps everything; N (True is 1) checkpoints
    every N-th block, counted from 1 as torchtitan's _apply_layer_sac does
    (`_layer_sac_count += 1`, then wrap when count % ac_freq == 0): with 2
    the second, fourth, ... block.  An OpSAC(N) checkpoints the same
    blocks with torchtitan's op-level policy."""
    for i, layer in enumerate(layers):
        if recompute and (i + 1) % int(recompute) == 0 and _OFFLOAD[0] is not None:
            # torchtune's decoder passes the mask and positions by keyword:
            # the checkpoint saves (and the offload packs) the hidden
            # state only.
            hidden_states = checkpoint(layer, hidden_states, op=isinstance(recompute, OpSAC),
                                       kw=dict(zip(("attention_mask", "position_ids"), args)))
        elif recompute and (i + 1) % int(recompute) == 0:
            hidden_states = checkpoint(layer, hidden_states, *args, op=isinstance(recompute, OpSAC))
        else:
            hidden_states = layer(hidden_states, *args)
    return hidden_states


def apply_float8(model, recipe):
    """torchtitan v0.2.2's float8 converter (components/quantization/
    float8.py): torchao's convert_to_float8_training with the recipe's
    Float8LinearConfig, every nn.Linear but the output projection
    (filter_fqns ["output"], here lm_head) and those whose dimensions are
    not multiples of 16.  torchao's casts and torch._scaled_mm run on the
    CPU in PyTorch 2.13 (not emulated).  With --compile the converter runs
    first and the layers are compiled after it, as torchtitan's
    parallelize does (float8 converter, then apply_compile)."""
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    cfg = Float8LinearConfig.from_recipe_name(recipe)

    def keep(mod, fqn):
        return (isinstance(mod, nn.Linear) and not fqn.endswith("lm_head") and
                mod.in_features % 16 == 0 and mod.out_features % 16 == 0)
    convert_to_float8_training(model, config=cfg, module_filter_fn=keep)


class OpSAC(int):
    """--recompute op with a stride: the blocks checkpointed (every N-th),
    each with torchtitan's op-level selective-checkpoint policy."""


def _op_sac_save_list():
    """torchtitan v0.2.2, torchtitan/models/llama3/infra/parallelize.py,
    _op_sac_save_list: the ops whose outputs the policy saves (the ones
    this torch lacks are left out; the CPU SDPA kernel,
    _scaled_dot_product_flash_attention_for_cpu, is not on it)."""
    names = [("aten", "mm"), ("aten", "_scaled_dot_product_efficient_attention"),
             ("aten", "_scaled_dot_product_flash_attention"),
             ("aten", "_scaled_dot_product_cudnn_attention"),
             ("aten", "_scaled_dot_product_attention_math"),
             ("aten", "_scaled_dot_product_fused_attention_overrideable"),
             ("_c10d_functional", "reduce_scatter_tensor"), ("aten", "max")]
    out = set()
    for ns, op in names:
        try:
            out.add(getattr(getattr(torch.ops, ns), op).default)
        except (AttributeError, RuntimeError):
            pass
    return out


def _op_sac_context():
    """torchtitan v0.2.2's _apply_op_sac context_fn
    (torchtitan/distributed/activation_checkpoint.py, _get_custom_policy):
    a counter per checkpoint call counts aten.mm separately in forward and
    recompute; an op on the save list is MUST_SAVE unless it is an mm
    whose count is even; everything else PREFER_RECOMPUTE."""
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    save = _op_sac_save_list()
    mm = torch.ops.aten.mm.default
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "recompute_mm_count" if ctx.is_recompute else "forward_mm_count"
        if func == mm:
            meta[key] += 1
        to_save = func in save and not (func == mm and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if to_save else CheckpointPolicy.PREFER_RECOMPUTE
    return create_selective_checkpoint_contexts(policy)


def checkpoint(fn, *args, op=False, kw=None):
    """HF gradient checkpointing around one block (non-reentrant where the
    installed torch supports the keyword); op: torchtitan's op-level
    policy, through ptd_checkpoint_wrapper's defaults there
    (preserve_rng_state True, early_stop False); kw: keyword arguments of
    fn (never saved by the checkpoint: kept by its closure)."""
    if kw and op:
        return _ckpt.checkpoint(fn, *args, use_reentrant=False, context_fn=_op_sac_context,
                                early_stop=False, **kw)
    if kw:
        return _ckpt.checkpoint(fn, *args, use_reentrant=False, **kw)
    if op:
        return _ckpt.checkpoint(fn, *args, use_reentrant=False, context_fn=_op_sac_context,
                                early_stop=False)
    try:
        return _ckpt.checkpoint(fn, *args, use_reentrant=False)
    except TypeError:  # pragma: no cover - torch < 1.11
        return _ckpt.checkpoint(fn, *args)


# The "host" of the offload modes below: a numpy array, which the profiled
# allocator never sees.  numpy has no bf16, so the bits are kept under a
# same-sized integer dtype.
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _to_host(t):
    import numpy as np
    return (np.array(t.detach().view(_BITS[t.element_size()]).numpy(), copy=True), t.dtype)


def _to_device(h):
    """A host copy brought back: a fresh tensor of the allocator."""
    a, dt = h
    out = torch.empty(a.shape, dtype=dt)
    out.view(_BITS[out.element_size()]).copy_(torch.from_numpy(a))
    return out


class HostOffload(torch.autograd.graph.saved_tensors_hooks):
    """torchtune's OffloadActivations (training/_activation_offloading.py,
    use_streams=True, its defaults: max_fwd_stash_size 5, min_offload_size
    1024 B) on the CPU: the "host" copy is a numpy array, which the
    profiled allocator never sees, and a copy brought back is a fresh
    tensor of the allocator, as .to("cuda") makes on the GPU.  The streams
    are gone (one device, no overlap) but their bookkeeping stays: the
    forward stash keeps each original until a later offloadable pack's id
    is five past its own, the first backward hook empties it, a tensor
    brought back waits in the backward stash until the hook of the next
    node that unpacks one, and the end of backward frees the rest."""

    MAX_FWD_STASH = 5
    MIN_BYTES = 1024

    def __init__(self):
        self.tracker = {}
        self.tensor_id = 0
        self.fwd_stash = {}
        self.bwd_tensor_stash = {}
        self.first_backward = True
        self.curr_graph_id = None
        self.curr_node = None

        def pack(t):
            if not self.first_backward:
                self.first_backward = True
            self.tensor_id += 1
            tid = self.tensor_id
            if t.element_size() * t.nelement() >= self.MIN_BYTES and \
                    not isinstance(t, nn.Parameter) and not isinstance(t, nn.Buffer):
                for k in list(self.fwd_stash):
                    if k <= tid - self.MAX_FWD_STASH:
                        del self.fwd_stash[k]
                    else:
                        break
                self.tracker[tid] = (_to_host(t), True)
                self.fwd_stash[tid] = t
            else:
                self.tracker[tid] = (t, False)
            return tid

        def unpack(tid):
            if self.first_backward:
                self.first_backward = False
                self.curr_graph_id = torch._C._current_graph_task_id()

                def wait_and_del_remaining_references():
                    self.bwd_tensor_stash.clear()
                torch.autograd.variable.Variable._execution_engine.queue_callback(
                    wait_and_del_remaining_references)
            x, modified = self.tracker.pop(tid)
            if not modified:
                return x
            graph_id = torch._C._current_graph_task_id()
            node = torch._C._current_autograd_node()
            prev = []
            if graph_id == self.curr_graph_id and self.curr_node != node:
                self.curr_node = node
                prev = list(self.bwd_tensor_stash)
            back = tid not in self.fwd_stash
            if back:
                x = _to_device(x)
                self.bwd_tensor_stash[tid] = x
            else:
                x = self.fwd_stash[tid]

            def hook(outputs, inputs):
                if back and tid in self.bwd_tensor_stash:
                    u = self.bwd_tensor_stash[tid]
                    if any(o is not None and o.untyped_storage() is u.untyped_storage() for o in outputs):
                        del self.bwd_tensor_stash[tid]
                self.fwd_stash.clear()
                for k in prev:
                    self.bwd_tensor_stash.pop(k, None)
                return outputs
            node.register_hook(hook)
            return x

        super().__init__(pack, unpack)


class SaveOnCpu(torch.autograd.graph.saved_tensors_hooks):
    """torch.autograd.graph.save_on_cpu (pin_memory=False) on the CPU:
    pack_to_cpu copies every saved tensor, parameters included, to the
    host (a numpy array here, which the profiled allocator never sees);
    unpack_from_cpu brings each back as a fresh tensor of the allocator
    (tensor.to(device)), which the autograd node holds while it runs."""

    def __init__(self):
        super().__init__(_to_host, _to_device)


# The --activation-offload context of the step being measured (measure()).
_OFFLOAD = [None]


def _offload_enter():
    h = _OFFLOAD[0]
    if h is not None:
        h.__enter__()
    return h


def _offload_exit(h):
    if h is not None:
        h.__exit__(None, None, None)


class DecoderLM(nn.Module):
    """LlamaForCausalLM (transformers v4.40.x, use_cache=False,
    pretraining_tp=1), generalized by the config."""

    def __init__(self, c, attention, recompute, loss_impl="full"):
        super().__init__()
        self.c = c
        self.attention = attention
        self.recompute = recompute
        self.loss_impl = loss_impl
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
        if c["position"] == "learned":
            self.embed_positions = nn.Embedding(c["max_seq"], c["hidden"])
        self.layers = nn.ModuleList([DecoderLayer(c, attention) for _ in range(c["layers"])])
        self.norm = make_norm(c, c["hidden"])
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        if c["tie_embeddings"]:
            self.lm_head.weight = self.embed_tokens.weight
        self.loss_fn = F.cross_entropy   # torch.compile'd by _compile_model
        self.chunk_ce = _tt_compute_cross_entropy   # likewise

    def _update_causal_mask(self, input_tensor, cache_position):
        # v4.40 LlamaModel._update_causal_mask (no attention_mask given, dynamic
        # cache, past_seen_tokens = 0 -> target_length = seq + 1)
        if self.attention == "sdpa":
            return None   # AttentionMaskConverter._ignore_causal_mask_sdpa -> is_causal
        dtype, device = input_tensor.dtype, input_tensor.device
        min_dtype = torch.finfo(dtype).min
        sequence_length = input_tensor.shape[1]
        target_length = sequence_length + 1
        causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=dtype, device=device)
        if sequence_length != 1:
            causal_mask = torch.triu(causal_mask, diagonal=1)
        causal_mask *= torch.arange(target_length, device=device) > cache_position.reshape(-1, 1)
        causal_mask = causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1, -1, -1)
        return causal_mask

    def forward(self, input_ids, labels):
        with phase("forward"):
            # torchtune's offload context covers the model but its output
            # head (NoOpManager); the loss is outside it.
            off = _offload_enter()
            inputs_embeds = self.embed_tokens(input_ids)
            cache_position = torch.arange(0, inputs_embeds.shape[1], device=inputs_embeds.device)
            position_ids = cache_position.unsqueeze(0)
            causal_mask = self._update_causal_mask(inputs_embeds, cache_position)
            hidden_states = inputs_embeds
            if self.c["position"] == "learned":
                hidden_states = hidden_states + self.embed_positions(position_ids)
            del inputs_embeds
            hidden_states = _run_layers(self.layers, self.recompute, hidden_states, causal_mask, position_ids)
            hidden_states = self.norm(hidden_states)
            _offload_exit(off)
            del causal_mask, position_ids, cache_position
            logits = None
            if self.loss_impl == "chunked-output":
                return self._chunked_output_loss(hidden_states, labels)
            if self.loss_impl != "chunked":
                logits = self.lm_head(hidden_states)
                del hidden_states
        if logits is None:
            return self._chunked_loss(hidden_states, labels)
        with phase("loss"):
            logits = logits.float()
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            shift_logits = shift_logits.view(-1, self.c["vocab"])
            shift_labels = shift_labels.view(-1)
            loss = self.loss_fn(shift_logits, shift_labels)
            del logits, shift_logits, shift_labels
        return loss

    def _chunked_output_loss(self, hidden_states, labels):
        """torchtune (v0.4-v0.6): TransformerDecoder.chunked_output makes
        the logits piece by piece and returns the list
        ([self.output(chunk) for chunk in h.chunk(num_output_chunks,
        dim=1)], modules/transformer.py); the recipe shifts the labels
        instead of the logits (torch.hstack((labels[..., 1:],
        ignore_labels_cache)), recipes/full_finetune_single_device.py),
        calls the loss and then `del logits`; CEWithChunkedOutputLoss
        (modules/loss/ce_chunked_output_loss.py) upcasts each piece and
        sums F.cross_entropy(logits.float(), labels, reduction="sum") over
        them, divided by the count of labels that are not ignored."""
        logits = [self.lm_head(chunk) for chunk in hidden_states.chunk(TT_OUTPUT_CHUNKS, dim=1)]
        del hidden_states
        with phase("loss"):
            ignore = torch.full((labels.shape[0], 1), -100, dtype=labels.dtype, device=labels.device)
            labels = torch.hstack((labels[..., 1:], ignore))
            total_elements = (labels != -100).sum()
            lab = [t.reshape(-1) for t in labels.chunk(TT_OUTPUT_CHUNKS, dim=1)]
            lgs = [t.reshape(-1, t.size(-1)) for t in logits]
            total_loss = 0.0
            for lc, tc in zip(lgs, lab):
                total_loss += self.chunk_ce(lc, tc)
            loss = total_loss / total_elements
            del lgs, lab, total_loss, labels, ignore, total_elements, lc, tc
            del logits
        return loss

    def _chunked_loss(self, hidden_states, labels):
        # Liger's lce_forward (training, labels given): no logits at all
        with phase("loss"):
            shift_hidden_states = hidden_states[..., :-1, :].contiguous()
            del hidden_states
            shift_labels = labels[..., 1:].contiguous()
            shift_hidden_states = shift_hidden_states.view(-1, self.c["hidden"])
            shift_labels = shift_labels.view(-1)
            loss = chunked_cross_entropy(shift_hidden_states, self.lm_head.weight, shift_labels,
                                         self.lm_head.bias)
            del shift_hidden_states, shift_labels
        return loss


# ---- GPT-2 (GPT2LMHeadModel)

def _tt_compute_cross_entropy(logits, labels):
    """CEWithChunkedOutputLoss.compute_cross_entropy (torchtune
    modules/loss/ce_chunked_output_loss.py): one chunk's upcast and
    summed cross-entropy, the method its apply_compile_strategy compiles
    in place (training.compile_loss)."""
    return F.cross_entropy(logits.float(), labels, ignore_index=-100, reduction="sum")


class Conv1D(nn.Module):
    def __init__(self, nf, nx, bias=True):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        nn.init.normal_(self.weight, std=0.02)
        self.bias = nn.Parameter(torch.zeros(nf)) if bias else None

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        if self.bias is not None:
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        else:
            x = torch.mm(x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, c, attention):
        super().__init__()
        max_positions = c["max_seq"]
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions),
            persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e4), persistent=False)
        self.embed_dim = c["hidden"]
        self.num_heads = c["heads"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.attention = attention
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim, bias=c["qkv_bias"])
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim, bias=c["bias"])
        self.p = c["dropout"]

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = _dropout(attn_weights, self.p, self.training)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if self.attention == "sdpa":
            # GPT2SdpaAttention (later transformers): is_causal, no mask
            attn_output = sdpa(query, key, value, True, self.p, self.training)
        else:
            attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        return _dropout(attn_output, self.p, self.training)


class GPT2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = Conv1D(c["ffn"], c["hidden"], bias=c["bias"])
        self.c_proj = Conv1D(c["hidden"], c["ffn"], bias=c["bias"])
        # GPT-2 ships gelu_new (activation: gelu-new); plain gelu is the
        # erf kernel, gelu-tanh the fused tanh kernel.
        self.act = {"gelu-new": gelu_new, "gelu": F.gelu, "gelu-tanh": gelu_tanh}.get(c["activation"], F.relu)
        self.p = c["dropout"]

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return _dropout(hidden_states, self.p, self.training)


class GPT2Block(nn.Module):
    def __init__(self, c, attention):
        super().__init__()
        self.ln_1 = LayerNorm(c["hidden"], eps=1e-5)
        self.attn = GPT2Attention(c, attention)
        self.ln_2 = LayerNorm(c["hidden"], eps=1e-5)
        self.mlp = GPT2MLP(c)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return residual + feed_forward_hidden_states


class GPT2LM(nn.Module):
    """GPT2LMHeadModel (transformers v4.40.x, use_cache=False)."""

    def __init__(self, c, attention, recompute, loss_impl="full"):
        super().__init__()
        self.c = c
        self.recompute = recompute
        self.loss_impl = loss_impl
        self.wte = nn.Embedding(c["vocab"], c["hidden"])
        if c["position"] == "learned":
            self.wpe = nn.Embedding(c["max_seq"], c["hidden"])
        self.h = nn.ModuleList([GPT2Block(c, attention) for _ in range(c["layers"])])
        self.ln_f = LayerNorm(c["hidden"], eps=1e-5)
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        if c["tie_embeddings"]:
            self.lm_head.weight = self.wte.weight

    def forward(self, input_ids, labels):
        with phase("forward"):
            input_shape = input_ids.size()
            inputs_embeds = self.wte(input_ids)
            if self.c["position"] == "learned":
                position_ids = torch.arange(0, input_shape[-1], dtype=torch.long, device=input_ids.device)
                position_ids = position_ids.unsqueeze(0)
                position_embeds = self.wpe(position_ids)
                hidden_states = inputs_embeds + position_embeds
                del position_ids, position_embeds
            else:
                hidden_states = inputs_embeds
            del inputs_embeds
            hidden_states = _dropout(hidden_states, self.c["dropout"], self.training)
            hidden_states = _run_layers(self.h, self.recompute, hidden_states)
            hidden_states = self.ln_f(hidden_states)
            lm_logits = None
            if self.loss_impl != "chunked":
                lm_logits = self.lm_head(hidden_states)
                del hidden_states
        if lm_logits is None:
            return DecoderLM._chunked_loss(self, hidden_states, labels)
        with phase("loss"):
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            del lm_logits
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
            del shift_logits, shift_labels
        return loss


# ---- BERT (BertForMaskedLM)

class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.word_embeddings = nn.Embedding(c["vocab"], c["hidden"])
        if c["position"] == "learned":
            self.position_embeddings = nn.Embedding(c["max_seq"], c["hidden"])
            self.register_buffer("position_ids", torch.arange(c["max_seq"]).expand((1, -1)), persistent=False)
        if c["type_vocab"] > 0:
            self.token_type_embeddings = nn.Embedding(c["type_vocab"], c["hidden"])
            self.register_buffer("token_type_ids", torch.zeros((1, c["max_seq"]), dtype=torch.long), persistent=False)
        self.LayerNorm = LayerNorm(c["hidden"], eps=1e-12)
        self.p = c["dropout"]

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        inputs_embeds = self.word_embeddings(input_ids)
        embeddings = inputs_embeds
        if self.c["type_vocab"] > 0:
            buffered_token_type_ids = self.token_type_ids[:, :seq_length]
            token_type_ids = buffered_token_type_ids.expand(input_ids.size(0), seq_length)
            token_type_embeddings = self.token_type_embeddings(token_type_ids)
            embeddings = inputs_embeds + token_type_embeddings
            del token_type_embeddings
        del inputs_embeds
        if self.c["position"] == "learned":
            position_ids = self.position_ids[:, :seq_length]
            position_embeddings = self.position_embeddings(position_ids)
            embeddings += position_embeddings
            del position_embeddings
        embeddings = self.LayerNorm(embeddings)
        return _dropout(embeddings, self.p, self.training)


class BertSelfAttention(nn.Module):
    def __init__(self, c, attention):
        super().__init__()
        self.num_attention_heads = c["heads"]
        self.attention_head_size = c["head_dim"]
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c["hidden"], self.all_head_size, bias=c["qkv_bias"])
        self.key = nn.Linear(c["hidden"], self.all_head_size, bias=c["qkv_bias"])
        self.value = nn.Linear(c["hidden"], self.all_head_size, bias=c["qkv_bias"])
        self.p = c["dropout"]
        self.attention = attention

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        del mixed_query_layer
        if self.attention == "sdpa":
            # BertSdpaSelfAttention: all-ones mask dropped, is_causal=False
            context_layer = sdpa(query_layer, key_layer, value_layer, False, self.p, self.training)
        else:
            attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
            attention_scores = attention_scores / math.sqrt(self.attention_head_size)
            if attention_mask is not None:
                attention_scores = attention_scores + attention_mask
            attention_probs = F.softmax(attention_scores, dim=-1)
            del attention_scores
            attention_probs = _dropout(attention_probs, self.p, self.training)
            context_layer = torch.matmul(attention_probs, value_layer)
            del attention_probs
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        return context_layer.view(new_context_layer_shape)


class BertLayer(nn.Module):
    def __init__(self, c, attention):
        super().__init__()
        h = c["hidden"]
        self.self_attn = BertSelfAttention(c, attention)
        self.attn_out_dense = nn.Linear(c["heads"] * c["head_dim"], h, bias=c["bias"])
        self.attn_out_ln = LayerNorm(h, eps=1e-12)
        self.intermediate_dense = nn.Linear(h, c["ffn"], bias=c["bias"])
        self.output_dense = nn.Linear(c["ffn"], h, bias=c["bias"])
        self.output_ln = LayerNorm(h, eps=1e-12)
        self.act = F.gelu if c["activation"] == "gelu" else F.relu
        self.p = c["dropout"]

    def forward(self, hidden_states, attention_mask):
        # BertAttention = BertSelfAttention + BertSelfOutput
        self_outputs = self.self_attn(hidden_states, attention_mask)
        h = self.attn_out_dense(self_outputs)
        del self_outputs
        h = _dropout(h, self.p, self.training)
        attention_output = self.attn_out_ln(h + hidden_states)
        del h
        # BertIntermediate (GELUActivation = erf gelu)
        intermediate_output = self.act(self.intermediate_dense(attention_output))
        # BertOutput
        h = self.output_dense(intermediate_output)
        del intermediate_output
        h = _dropout(h, self.p, self.training)
        return self.output_ln(h + attention_output)


class BertMLM(nn.Module):
    """BertForMaskedLM (transformers v4.40.x, no pooler); labels on every
    position (no -100), so the loss covers b*s tokens."""

    def __init__(self, c, attention, recompute, loss_impl="full"):
        super().__init__()
        self.c = c
        self.attention = attention
        self.recompute = recompute
        self.loss_impl = loss_impl
        self.embeddings = BertEmbeddings(c)
        self.layer = nn.ModuleList([BertLayer(c, attention) for _ in range(c["layers"])])
        # BertOnlyMLMHead -> BertLMPredictionHead
        self.transform_dense = nn.Linear(c["hidden"], c["hidden"])
        self.transform_act = F.gelu if c["activation"] == "gelu" else F.relu
        self.transform_ln = LayerNorm(c["hidden"], eps=1e-12)
        self.decoder = nn.Linear(c["hidden"], c["vocab"], bias=False)
        self.decoder_bias = nn.Parameter(torch.zeros(c["vocab"]))
        self.decoder.bias = self.decoder_bias
        if c["tie_embeddings"]:
            self.decoder.weight = self.embeddings.word_embeddings.weight

    def forward(self, input_ids, labels):
        with phase("forward"):
            batch_size, seq_length = input_ids.size()
            ext = None
            if self.attention != "sdpa":
                # BertModel: all-ones attention_mask -> get_extended_attention_mask
                attention_mask = torch.ones((batch_size, seq_length), device=input_ids.device)
                ext = attention_mask[:, None, None, :]
                pdtype = self.decoder_bias.dtype
                ext = ext.to(dtype=pdtype)
                ext = (1.0 - ext) * torch.finfo(pdtype).min
                del attention_mask
            hidden_states = self.embeddings(input_ids)
            hidden_states = _run_layers(self.layer, self.recompute, hidden_states, ext)
            del ext
            h = self.transform_dense(hidden_states)
            del hidden_states
            h = self.transform_act(h)
            h = self.transform_ln(h)
            prediction_scores = None
            if self.loss_impl != "chunked":
                prediction_scores = self.decoder(h)
                del h
        if prediction_scores is None:
            with phase("loss"):
                # the fused op over all b*s positions (no shift), decoder weight + bias
                loss = chunked_cross_entropy(h.view(-1, self.c["hidden"]), self.decoder.weight,
                                             labels.view(-1), self.decoder.bias)
                del h
            return loss
        with phase("loss"):
            loss = F.cross_entropy(prediction_scores.view(-1, self.c["vocab"]), labels.view(-1))
            del prediction_scores
        return loss


# ---- torch.nn.TransformerEncoderLayer model

class TorchNNLM(nn.Module):
    """Embedding (+ learned positions) -> nn.TransformerEncoderLayer x L
    (batch_first, post-LN) -> Linear head -> cross entropy.  For decoder
    descriptions a causal src_mask is passed and the loss is shifted."""

    def __init__(self, c, recompute):
        super().__init__()
        if c["activation"] not in ("relu", "gelu"):
            raise HarnessError("torch-nn: activation must be relu or gelu")
        if c["norm"] != "layernorm":
            raise HarnessError("torch-nn: norm must be layernorm")
        if c["kv_heads"] != c["heads"] or c["head_dim"] * c["heads"] != c["hidden"]:
            raise HarnessError("torch-nn: kv_heads/head_dim must be the MHA defaults")
        if c["position"] == "rope":
            raise HarnessError("torch-nn: position must be learned or none")
        self.c = c
        self.recompute = recompute
        self.embed = nn.Embedding(c["vocab"], c["hidden"])
        if c["position"] == "learned":
            self.pos = nn.Embedding(c["max_seq"], c["hidden"])
        kw = {}
        if not c["bias"]:
            import inspect
            if "bias" not in inspect.signature(nn.TransformerEncoderLayer.__init__).parameters:
                raise HarnessError("torch-nn: bias: false needs torch >= 2.1")
            kw["bias"] = False
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(c["hidden"], c["heads"], dim_feedforward=c["ffn"], dropout=c["dropout"],
                                       activation=c["activation"], batch_first=True, norm_first=False, **kw)
            for _ in range(c["layers"])])
        self.head = nn.Linear(c["hidden"], c["vocab"], bias=c["bias"])
        if c["tie_embeddings"]:
            self.head.weight = self.embed.weight
        self.causal = c["architecture"] == "decoder"

    def forward(self, input_ids, labels):
        with phase("forward"):
            s = input_ids.size(1)
            h = self.embed(input_ids)
            if self.c["position"] == "learned":
                h = h + self.pos(torch.arange(s, device=input_ids.device).unsqueeze(0))
            mask = None
            if self.causal:
                mask = torch.triu(torch.full((s, s), float("-inf"), device=input_ids.device), diagonal=1)
            h = _run_layers(self.layers, self.recompute, h, mask)
            del mask
            logits = self.head(h)
            del h
        with phase("loss"):
            if self.causal:
                sl = logits[..., :-1, :].contiguous()
                del logits
                loss = F.cross_entropy(sl.view(-1, self.c["vocab"]), labels[..., 1:].contiguous().view(-1))
                del sl
            else:
                loss = F.cross_entropy(logits.view(-1, self.c["vocab"]), labels.view(-1))
                del logits
        return loss


def build_model(c, attention, recompute, loss_impl="full"):
    fam = model_family(c)
    if loss_impl == "chunked" and fam == "torch-nn":
        raise HarnessError("--loss chunked is not supported for the torch-nn family")
    if loss_impl == "chunked-output" and fam != "llama":
        raise HarnessError("--loss chunked-output (torchtune) is cloned for the llama family only")
    if fam == "llama":
        return DecoderLM(c, attention, recompute, loss_impl)
    if fam == "gpt2":
        return GPT2LM(c, attention, recompute, loss_impl)
    if fam == "bert":
        if c["activation"] not in ("gelu", "relu"):
            raise HarnessError("bert family: activation must be gelu or relu")
        if c["norm"] != "layernorm":
            raise HarnessError("bert family: norm must be layernorm")
        if c["position"] == "rope":
            raise HarnessError("bert family: position must be learned or none")
        return BertMLM(c, attention, recompute, loss_impl)
    return TorchNNLM(c, recompute)


# ----------------------------------------------------------------------------
# LoRA (peft ~0.11 LoraLayer / lora.Linear) and chunked cross-entropy
# (Liger-Kernel's LigerFusedLinearCrossEntropyFunction)
# ----------------------------------------------------------------------------

# --trace only: which part of a LoRA branch is running, read by the pack hook
# of trace_saved_tensors (assigning a Python list slot allocates no tensor).
_TRACE_SCOPE = [None]


class LoraLinear(nn.Module):
    """peft.tuners.lora.layer.Linear (PEFT ~0.11), one adapter, no DoRA:

        result = self.base_layer(x)
        torch_result_dtype = result.dtype
        x = x.to(lora_A.weight.dtype)
        result = result + lora_B(lora_A(dropout(x))) * scaling
        result = result.to(torch_result_dtype)

    lora_A: in -> r, lora_B: r -> out, both nn.Linear without bias (PEFT uses
    the same nn.Linear adapters for GPT-2's Conv1D base layers, with
    fan_in_fan_out only affecting merges); dropout is nn.Dropout(p), or
    nn.Identity when p == 0; scaling = alpha / r.  Init as PEFT's default:
    A kaiming_uniform_(a=sqrt(5)), B zeros."""

    def __init__(self, base_layer, in_features, out_features, r, alpha, dropout, name):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.Linear(in_features, r, bias=False)
        self.lora_B = nn.Linear(r, out_features, bias=False)
        self.lora_dropout = nn.Dropout(p=dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / r
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.lora_name = name

    def forward(self, x):
        sc = _TRACE_SCOPE
        result = self.base_layer(x)
        torch_result_dtype = result.dtype
        sc[0] = "x.to(adapter dtype)"
        x = x.to(self.lora_A.weight.dtype)
        sc[0] = "dropout"
        x = self.lora_dropout(x)
        sc[0] = "lora_A"
        a = self.lora_A(x)
        sc[0] = "lora_B"
        b = self.lora_B(a)
        sc[0] = "* scaling"
        b = b * self.scaling
        sc[0] = "result + delta"
        result = result + b
        sc[0] = "result.to(result dtype)"
        result = result.to(torch_result_dtype)
        sc[0] = None
        return result


def _lora_sites(model, fam):
    """{target: [(parent module, attribute, in, out, name)]} for the model."""
    sites = {t: [] for t in LORA_TARGETS}

    def add(t, parent, attr, name):
        m = getattr(parent, attr)
        if isinstance(m, Conv1D):
            fin, fout = m.weight.shape
        else:
            fin, fout = m.in_features, m.out_features
        sites[t].append((parent, attr, fin, fout, name))

    if fam == "llama":
        for i, layer in enumerate(model.layers):
            at, mlp = layer.self_attn, layer.mlp
            for t, a in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj"), ("o", "o_proj")):
                add(t, at, a, "layers.%d.self_attn.%s" % (i, a))
            for t, a in (("gate", "gate_proj"), ("up", "up_proj"), ("down", "down_proj")):
                if hasattr(mlp, a):
                    add(t, mlp, a, "layers.%d.mlp.%s" % (i, a))
    elif fam == "gpt2":
        for i, blk in enumerate(model.h):
            for t in ("q", "k", "v"):          # fused c_attn = q, k and v together
                add(t, blk.attn, "c_attn", "h.%d.attn.c_attn" % i)
            add("o", blk.attn, "c_proj", "h.%d.attn.c_proj" % i)
            add("up", blk.mlp, "c_fc", "h.%d.mlp.c_fc" % i)
            add("down", blk.mlp, "c_proj", "h.%d.mlp.c_proj" % i)
    elif fam == "bert":
        for i, layer in enumerate(model.layer):
            for t, a in (("q", "query"), ("k", "key"), ("v", "value")):
                add(t, layer.self_attn, a, "layer.%d.attention.self.%s" % (i, a))
            add("o", layer, "attn_out_dense", "layer.%d.attention.output.dense" % i)
            add("up", layer, "intermediate_dense", "layer.%d.intermediate.dense" % i)
            add("down", layer, "output_dense", "layer.%d.output.dense" % i)
    else:
        raise HarnessError("--lora is not supported for the %s family" % fam)
    if fam in ("llama", "gpt2"):
        add("head", model, "lm_head", "lm_head")    # PEFT's target_modules=["lm_head"]
    return sites


def parse_lora_targets(spec):
    s = str(spec).strip().lower()
    if s in ("all-linear", "all_linear"):
        return "all-linear"
    out = []
    for t in s.split(","):
        t = t.strip()
        if not t:
            continue
        if t not in LORA_TARGETS:
            raise HarnessError("unknown LoRA target %r (use a comma list of %s, or all-linear)"
                               % (t, ",".join(LORA_TARGETS)))
        if t not in out:
            out.append(t)
    if not out:
        raise HarnessError("empty --lora-targets")
    return [t for t in LORA_TARGETS if t in out]


def apply_lora(model, fam, c, lo):
    """Freeze every base parameter and wrap the targeted layers in LoraLinear
    (adapter dtype lo['dtype']).  Returns (resolved targets, adapted module names)."""
    for p in model.parameters():
        p.requires_grad_(False)
    sites = _lora_sites(model, fam)
    want = lo["targets"]
    if want == "all-linear":
        # PEFT's all-linear leaves the output layer out.
        targets = [t for t in LORA_TARGETS if sites[t] and t != "head"]
    else:
        lacking = [t for t in want if not sites[t]]
        if lacking:
            raise HarnessError("the %s model %r has no %s projection(s) to adapt (it has: %s)" % (
                fam, c["name"], ",".join(lacking), ",".join(t for t in LORA_TARGETS if sites[t])))
        targets = list(want)
    done = {}
    names = []
    dt = getattr(torch, LORA_DTYPES[lo["dtype"]])
    for t in targets:
        for parent, attr, fin, fout, name in sites[t]:
            if name in done:        # GPT-2 c_attn: one adapter for q, k and v
                continue
            base = getattr(parent, attr)
            mod = LoraLinear(base, fin, fout, lo["r"], lo["alpha"], lo["dropout"], name)
            mod.lora_A.to(dt)
            mod.lora_B.to(dt)
            setattr(parent, attr, mod)
            done[name] = True
            names.append(name)
    return targets, names


def _nf4_api():
    """(to_nf4, linear_nf4): torchao.dtypes.nf4tensor where torchtune
    imports them (torchao up to 0.13), torchao 0.18's own module otherwise."""
    try:
        from torchao.dtypes.nf4tensor import linear_nf4, to_nf4
    except ImportError:
        from torchao.quantization.quantize_.workflows.nf4.nf4_tensor import linear_nf4, to_nf4
    return to_nf4, linear_nf4


class NF4Linear(nn.Module):
    """torchtune's frozen NF4 base linear (modules/low_precision
    FrozenNF4Linear, and LoRALinear's base with quantize_base=True, torchtune
    0.4 to 0.6): the weight is torchao's NF4Tensor (to_nf4 of the loaded
    weight, a frozen Parameter) and the forward is torchao's linear_nf4,
    whose LinearNF4 autograd function saves only the NF4 weight and
    dequantizes it (weight.to(input.dtype)) in forward and again in
    backward."""

    def __init__(self, base):
        super().__init__()
        to_nf4 = _nf4_api()[0]
        if getattr(base, "bias", None) is not None:
            raise HarnessError("NF4Linear: torchtune's NF4 linears have no bias")
        w = base.weight.detach()
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight = nn.Parameter(to_nf4(w), requires_grad=False)

    def forward(self, x):
        return _NF4_LINEAR[0](input=x, weight=self.weight)


def apply_nf4(model, fam):
    """Quantize every block projection (q, k, v, o, gate, up, down) to NF4
    as torchtune's QLoRA builders do (lora_llama*, quantize_base=True): the
    LoRA targets' base layers and the other projections alike; embeddings,
    norms and the output head stay in the model dtype.  torchao is needed."""
    try:
        _NF4_LINEAR[0] = _nf4_api()[1]
    except ImportError as e:
        raise HarnessError("--quant nf4 needs torchao (requirements-test.txt pins it): %s" % e)
    sites = _lora_sites(model, fam)
    for t in ("q", "k", "v", "o", "gate", "up", "down"):
        for parent, attr, fin, fout, name in sites[t]:
            m = getattr(parent, attr)
            if isinstance(m, LoraLinear):
                if not isinstance(m.base_layer, NF4Linear):
                    m.base_layer = NF4Linear(m.base_layer)
            elif not isinstance(m, NF4Linear):
                setattr(parent, attr, NF4Linear(m))
    gc.collect()


def _enable_input_require_grads(model, fam):
    """transformers' PreTrainedModel.enable_input_require_grads(), which PEFT
    (PeftModel._prepare_model_for_gradient_checkpointing), TRL and
    prepare_model_for_kbit_training call when gradient checkpointing is on:
    a forward hook making the input embeddings' output require grad."""
    emb = {"llama": lambda m: m.embed_tokens, "gpt2": lambda m: m.wte,
           "bert": lambda m: m.embeddings.word_embeddings}[fam](model)

    def hook(module, inputs, output):
        output.requires_grad_(True)
    return emb.register_forward_hook(hook)


def _next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _cdiv(a, b):
    return (a + b - 1) // b


def flce_chunking(BT, H, V):
    """Liger: inc_factor = cdiv(V, H); chunk_size = next_power_of_2(cdiv(BT, inc_factor))."""
    inc_factor = _cdiv(V, H)
    chunk_size = _next_power_of_2(_cdiv(BT, inc_factor))
    return chunk_size, _cdiv(BT, chunk_size)


def _liger_ce_rows_(logits_chunk, target_chunk, loss_slice, n_non_ignore, ignore_index):
    """liger_cross_entropy_kernel (reduction mean, no smoothing/z-loss/softcap):
    per row, loss = (lse - x_y) / n_non_ignore and the row is overwritten IN
    PLACE with its gradient (softmax - onehot) / n_non_ignore (0 for ignored
    rows), stored in the logits' dtype.  The Triton kernel upcasts to fp32 in
    registers; here rows are upcast in blocks of <= CE_BLOCK_ELEMS elements
    (at least one row), in place when the logits are already fp32."""
    rows, V = logits_chunk.shape
    blk = max(1, min(rows, CE_BLOCK_ELEMS // max(1, V)))
    for r0 in range(0, rows, blk):
        r1 = min(rows, r0 + blk)
        x = logits_chunk[r0:r1]
        xf = x if x.dtype == torch.float32 else x.float()
        t = target_chunk[r0:r1]
        keep = (t != ignore_index).unsqueeze(1)
        ti = t.clamp(min=0).unsqueeze(1)
        x_y = xf.gather(1, ti)
        m = xf.amax(1, keepdim=True)
        xf.sub_(m).exp_()
        d = xf.sum(1, keepdim=True)
        lse = d.log().add_(m)
        loss_slice[r0:r1] = lse.sub_(x_y).div_(n_non_ignore).mul_(keep).squeeze(1)
        del lse, m, x_y
        xf.div_(d)                           # softmax
        del d
        xf.scatter_add_(1, ti, torch.full((r1 - r0, 1), -1.0, dtype=xf.dtype, device=xf.device))
        xf.div_(n_non_ignore).mul_(keep)
        if xf is not x:
            x.copy_(xf)
        del xf, x, keep, ti, t


class LigerFusedLinearCrossEntropy(torch.autograd.Function):
    """Liger-Kernel's LigerFusedLinearCrossEntropyFunction (the v0.3-v0.5
    `fused_linear_cross_entropy_forward`, reduction mean, ignore_index -100):
    the loss AND the gradients of input/weight/bias are computed in forward,
    chunk by chunk, and only the gradients are kept for backward."""

    @staticmethod
    def forward(ctx, _input, weight, target, bias=None, ignore_index=-100):
        device = _input.device
        BT, H = _input.shape
        V = weight.shape[0]
        chunk_size, num_chunks = flce_chunking(BT, H, V)
        grad_weight = torch.zeros_like(weight, device=device) if weight.requires_grad else None
        grad_input = torch.zeros_like(_input, device=device)
        grad_bias = torch.zeros_like(bias, device=device) if bias is not None else None
        loss_1d = torch.zeros(BT, dtype=torch.float32, device=device)
        target_mask = target != ignore_index
        total_n_non_ignore = target_mask.sum().item()
        del target_mask
        for chunk_id in range(num_chunks):
            start_idx = chunk_id * chunk_size
            end_idx = min((chunk_id + 1) * chunk_size, BT)
            _input_chunk = _input[start_idx:end_idx]
            # when doing matmul, use the original precision (autocast applies)
            logits_chunk = _input_chunk @ weight.t()
            if bias is not None:
                logits_chunk = logits_chunk + bias
            target_chunk = target[start_idx:end_idx]
            loss_1d_slice = loss_1d[start_idx:end_idx]
            logits_chunk = logits_chunk.contiguous()
            target_chunk = target_chunk.contiguous()
            # the CE kernel writes the logits' gradient over logits_chunk
            _liger_ce_rows_(logits_chunk, target_chunk, loss_1d_slice, total_n_non_ignore, ignore_index)
            loss_1d[start_idx:end_idx] = loss_1d_slice
            grad_logits_chunk = logits_chunk
            grad_input[start_idx:end_idx] = grad_logits_chunk @ weight
            if grad_weight is not None:
                torch.addmm(input=grad_weight, mat1=logits_chunk.t().to(_input_chunk.dtype), mat2=_input_chunk,
                            out=grad_weight, alpha=1.0, beta=1.0)
            if bias is not None:
                torch.add(input=grad_bias, other=logits_chunk.sum(dim=0), out=grad_bias, alpha=1.0)
            del logits_chunk, grad_logits_chunk, _input_chunk, target_chunk, loss_1d_slice
        loss = torch.sum(loss_1d)
        del loss_1d
        ctx.save_for_backward(grad_input.detach(),
                              grad_weight.detach() if grad_weight is not None else None,
                              grad_bias.detach() if grad_bias is not None else None)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight, grad_bias = ctx.saved_tensors
        # fused_linear_cross_entropy_backward: skip the multiply when the
        # loss is the last op (grad_output == 1); else element_mul_kernel in place
        if not torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
            grad_input.mul_(grad_output)
            if grad_weight is not None:
                grad_weight.mul_(grad_output)
            if grad_bias is not None:
                grad_bias.mul_(grad_output)
        return grad_input, grad_weight, None, grad_bias, None


def chunked_cross_entropy(_input, weight, target, bias=None):
    """LigerFusedLinearCrossEntropyLoss()(weight, _input, target, bias)."""
    return LigerFusedLinearCrossEntropy.apply(_input, weight, target, bias, -100)


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

def _storage(t):
    """(key, nbytes) of a tensor's storage, torch 1.13 and 2.x."""
    if hasattr(t, "untyped_storage"):
        st = t.untyped_storage()
        return st.data_ptr(), st.nbytes()
    st = t.storage()
    return st.data_ptr(), st.nbytes()


def _inner_tensors(tensors):
    """The tensors that own memory: a wrapper subclass (torchao's
    NF4Tensor) is replaced by its inner tensors."""
    out = []
    for t in tensors:
        if hasattr(t, "__tensor_flatten__"):
            out += _inner_tensors([getattr(t, n) for n in t.__tensor_flatten__()[0]])
        else:
            out.append(t)
    return out


def _unique_bytes(tensors, seen=None):
    seen = {} if seen is None else seen
    total = 0
    for t in tensors:
        if t is None or not isinstance(t, torch.Tensor):
            continue
        if hasattr(t, "__tensor_flatten__"):
            # A wrapper subclass (torchao's NF4Tensor) owns no storage: its
            # inner tensors are the memory.
            total += _unique_bytes([getattr(t, n) for n in t.__tensor_flatten__()[0]], seen)
            continue
        key, nb = _storage(t)
        if nb == 0 or key in seen:
            continue
        seen[key] = nb
        total += nb
    return total


def _optimizer_tensors(opt):
    out = []
    for st in opt.state.values():
        for v in st.values():
            if isinstance(v, torch.Tensor):
                out.append(v)
    return out


OPTIMIZER_IMPLS = ("default", "for-loop", "foreach", "fused")


def make_optimizer(name, params, device, impl="default"):
    """torch.optim's optimizer; impl is vramplan's --optimizer-impl: the
    foreach= / fused= arguments (default: torch's own choice)."""
    lr = 1e-3
    kw = {}
    if impl == "for-loop":
        kw["foreach"] = False
    elif impl == "foreach":
        kw["foreach"] = True
    elif impl == "fused":
        kw["fused"] = True
    elif impl != "default":
        raise HarnessError("unknown optimizer implementation %r" % impl)
    try:
        if name == "sgd":
            opt = torch.optim.SGD(params, lr=lr, **kw)
        elif name == "sgd-momentum":
            opt = torch.optim.SGD(params, lr=lr, momentum=0.9, **kw)
        elif name == "adam":
            opt = torch.optim.Adam(params, lr=lr, **kw)
        elif name == "adamw":
            opt = torch.optim.AdamW(params, lr=lr, **kw)
        else:
            raise HarnessError("unknown optimizer %r" % name)
    except (TypeError, RuntimeError) as e:
        raise HarnessError("torch %s cannot build %s with %s: %s" % (torch.__version__, name, impl, e))
    return opt


class InBackwardOptimizer:
    """torchtune's optimizer_in_bwd (training/memory.py,
    register_optim_in_bwd_hooks): one optimizer per parameter, stepped in
    the parameter's post-accumulate-grad hook, which then calls zero_grad()
    (set_to_none=True, the default from torch 2.0), so each gradient is
    freed as soon as it has been used and no whole gradient set exists.
    step() and zero_grad() are no-ops for the training loop; state and
    param_groups look like one optimizer's to the rest of the harness.
    Needs torch >= 2.1 (Tensor.register_post_accumulate_grad_hook)."""

    def __init__(self, name, params, device, impl="default"):
        if not hasattr(torch.Tensor, "register_post_accumulate_grad_hook"):
            raise HarnessError("--optimizer-in-backward needs torch >= 2.1 "
                               "(register_post_accumulate_grad_hook); this is torch %s" % torch.__version__)
        self.optim = {p: make_optimizer(name, [p], device, impl) for p in params}
        for p in params:
            p.register_post_accumulate_grad_hook(self._hook)

    def _hook(self, p):
        self.optim[p].step()
        self.optim[p].zero_grad(set_to_none=True)

    @property
    def param_groups(self):
        return [g for o in self.optim.values() for g in o.param_groups]

    @property
    def state(self):
        st = {}
        for o in self.optim.values():
            st.update(o.state)
        return st

    def step(self):
        pass

    def zero_grad(self, set_to_none=True):
        pass


def effective_foreach(opt):
    """What the optimizer's step will actually use (group foreach=None means
    the torch default: False on torch 1.13; torch >= 2.0 picks foreach when
    all tensors are on CUDA)."""
    group = opt.param_groups[0]
    fe = group.get("foreach", None)
    if fe is not None:
        return bool(fe)
    try:
        from torch.optim.optimizer import _default_to_fused_or_foreach  # torch >= 2.0
        params = [p for g in opt.param_groups for p in g["params"]]
        differentiable = bool(group.get("differentiable", False))
        try:
            _, foreach = _default_to_fused_or_foreach(params, differentiable, use_fused=False)
        except TypeError:
            _, foreach = _default_to_fused_or_foreach([params], differentiable, use_fused=False)
        return bool(foreach)
    except ImportError:
        return False


def _autocast_ctx(precision, device):
    if precision == "bf16-mixed":
        return torch.autocast(device_type=device, dtype=torch.bfloat16)
    if precision == "fp16-mixed":
        return torch.autocast(device_type=device, dtype=torch.float16)
    return contextlib.nullcontext()


# ----------------------------------------------------------------------------
# CPU meter: exact replay of the profiler's allocator events
# ----------------------------------------------------------------------------

def _flatten_tree(roots):
    stack = list(reversed(roots))
    out = []
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.children))
    return out


def alloc_sites(rep, depth=3):
    """{op chain: number of allocation events} of a replay."""
    out = {}
    for _, _, _, size, node in rep.curve:
        if size > 0:
            k = _op_chain(node, depth)
            out[k] = out.get(k, 0) + 1
    return out


def _op_chain(node, maxlen=4):
    names = []
    p = node.parent
    while p is not None:
        nm = p.name
        if nm.startswith(MARK_PREFIX):
            break
        names.append(nm)
        p = p.parent
    names.reverse()   # outermost first
    if len(names) > maxlen:
        names = names[:2] + ["..."] + names[-(maxlen - 2):]
    return " > ".join(names) if names else "(python)"


class AllocReplay:
    """Replays the CPU allocation events of one profiled run on top of the
    bytes that were live before profiling started.  curve: list of
    (t_ns, live_bytes_after, ptr, signed_size, profiler_node)."""

    def __init__(self, prof, baseline_bytes):
        tree = prof.profiler.kineto_results.experimental_event_tree()
        nodes = _flatten_tree(tree)
        marks = []
        allocs = []
        for n in nodes:
            nm = n.name
            if nm.startswith(MARK_PREFIX):
                _, ph, st = nm.split(":")
                marks.append((n.start_time_ns, n.end_time_ns, ph, int(st)))
            elif type(n.extra_fields).__name__ == "_ExtraFields_Allocation":
                ef = n.extra_fields
                if ef.device.type != "cpu":
                    continue
                allocs.append((n.start_time_ns, len(allocs), ef.alloc_size, ef.ptr, ef.total_allocated, n))
        allocs.sort(key=lambda a: (a[0], a[1]))
        marks.sort()
        self.marks = marks
        self.baseline = baseline_bytes
        self.tids = sorted({a[5].start_tid for a in allocs})
        # replay
        live = {}
        cur = baseline_bytes
        curve = []
        foreign = 0
        order_ok = True
        prev_total = None
        n_alloc = n_free = 0
        for t, _, size, ptr, total, node in allocs:
            if prev_total is not None and total - prev_total != size:
                order_ok = False
            prev_total = total
            if size > 0:
                live[ptr] = size
                cur += size
                n_alloc += 1
            elif size < 0:
                if ptr in live:
                    cur -= live.pop(ptr)
                    n_free += 1
                else:
                    foreign += 1
                    continue
            curve.append((t, cur, ptr, size, node))
        self.curve = curve
        self.end_bytes = cur
        self.foreign_frees = foreign
        self.order_consistent = order_ok
        self.n_alloc, self.n_free = n_alloc, n_free
        self.leaked = len(live)

    def phase_of(self, t):
        ph, st = None, None
        for s0, s1, p, s in self.marks:
            if s0 <= t:
                ph, st = p, s
            else:
                break
        return ph, st

    def summarize(self):
        peak = self.baseline
        peak_i = -1
        for i, (_, cur, _, _, _) in enumerate(self.curve):
            if cur > peak:
                peak, peak_i = cur, i
        # per (step, phase): start/peak/end.  Events between two ranges
        # belong to the phase that started last.
        per = {}
        level = self.baseline
        mi = 0
        order = []
        for s0, s1, p, s in self.marks:
            order.append((s, p, s0, s1))
        bounds = sorted(order, key=lambda x: x[2])
        ci = 0
        curve = self.curve
        for idx, (s, p, s0, s1) in enumerate(bounds):
            nxt = bounds[idx + 1][2] if idx + 1 < len(bounds) else None
            while ci < len(curve) and curve[ci][0] < s0:
                level = curve[ci][1]
                ci += 1
            start = level
            pk = level
            end_in_range = level
            while ci < len(curve) and (nxt is None or curve[ci][0] < nxt):
                level = curve[ci][1]
                pk = max(pk, level)
                if curve[ci][0] <= s1:
                    end_in_range = level
                ci += 1
            per[(s, p)] = {"start_bytes": start, "peak_bytes": pk, "end_bytes": end_in_range,
                           "after_bytes": level}
        if peak_i >= 0:
            ph, st = self.phase_of(self.curve[peak_i][0])
        else:
            ph, st = None, None
        return peak, peak_i, ph, st, per

    def live_at(self, idx, top=int(os.environ.get("HARNESS_TRACE_TOP", "15"))):
        """Allocations live right after curve event idx: the largest ones
        made in the peak's own step (older ones are optimizer state), and
        totals by the (step, phase) that allocated them."""
        live = {}
        for i in range(idx + 1):
            _, _, ptr, size, node = self.curve[i]
            if size > 0:
                live[ptr] = (size, node, i)
            else:
                live.pop(ptr, None)
        items = sorted(live.values(), key=lambda x: -x[0])
        _, peak_step = self.phase_of(self.curve[idx][0])
        out = []
        for size, node, i in items:
            ph, st = self.phase_of(node.start_time_ns)
            if st != peak_step:
                continue
            out.append({"bytes": size, "allocated_in": "%s:%s" % (st, ph), "op": _op_chain(node)})
            if len(out) >= top:
                break
        groups = {}
        for size, node, i in items:
            ph, st = self.phase_of(node.start_time_ns)
            k = "%s:%s" % (st, ph)
            groups[k] = groups.get(k, 0) + size
        return out, groups, sum(v[0] for v in items)


# ----------------------------------------------------------------------------
# the training run
# ----------------------------------------------------------------------------

def _resolve(model_cfg, device, precision, optimizer, micro_batch, seq, recompute, attention, dropout,
             lora_r=0, lora_targets=None, lora_alpha=None, lora_dropout=0.0, lora_dtype="fp32", loss="full",
             recompute_stride=1, optimizer_in_bwd=False, float8=None, compile_mode="none",
             activation_offload=False, quant="none"):
    c = normalize_cfg(model_cfg)
    if dropout is not None:
        c["dropout"] = float(dropout)
    tr = c["training"]
    o = {
        "device": device,
        "precision": precision or tr["precision"],
        "optimizer": optimizer or tr["optimizer"],
        "micro_batch": int(micro_batch or tr["micro_batch"]),
        "seq": int(seq or tr["seq"]),
        "recompute": recompute or "none",
        "recompute_stride": int(recompute_stride or 1),
        "attention": attention or "eager",
        "loss": loss or "full",
        "lora": None,
        "optimizer_in_bwd": bool(optimizer_in_bwd),
        "float8": float8 or "none",
        "compile": compile_mode or "none",
        "quant": quant or "none",
    }
    if o["quant"] not in QUANTS:
        raise HarnessError("quant must be one of %s" % ", ".join(QUANTS))
    if o["quant"] != "none":
        if not lora_r:
            raise HarnessError("--quant nf4 freezes the base: it needs --lora R (QLoRA)")
        if o["precision"] not in ("bf16", "fp32"):
            raise HarnessError("--quant nf4 is torchtune's QLoRA: the model in its dtype "
                               "(bf16 or fp32), no autocast")
        if model_family(c) != "llama":
            raise HarnessError("--quant nf4 is implemented for the Llama-style family only")
        if o["float8"] != "none":
            raise HarnessError("--quant with --float8 is not implemented here")
    if o["float8"] not in ("none", "tensorwise", "rowwise"):
        raise HarnessError("float8 must be none, tensorwise or rowwise")
    if o["float8"] != "none" and o["lora"] is None and lora_r:
        raise HarnessError("float8 is not combined with LoRA here")
    if o["compile"] not in COMPILE_MODES:
        raise HarnessError("compile must be one of %s" % ", ".join(COMPILE_MODES))
    if o["compile"] != "none" and model_family(c) != "llama":
        raise HarnessError("--compile is implemented for the Llama-style family only")
    if o["compile"].startswith("wrapped") and activation_offload:
        raise HarnessError("--activation-offload with the compiled checkpoint wrapper is not implemented here")
    if o["loss"] not in LOSSES:
        raise HarnessError("loss must be full or chunked")
    if o["optimizer_in_bwd"] and o["precision"] == "fp16-mixed":
        raise HarnessError("--optimizer-in-backward cannot unscale fp16 gradients: GradScaler steps "
                           "the whole optimizer after backward")
    r = int(lora_r or 0)
    if r < 0:
        raise HarnessError("--lora must be >= 0")
    if r > 0:
        if (lora_dtype or "fp32") not in LORA_DTYPES:
            raise HarnessError("--lora-dtype must be fp32 or bf16")
        if not 0.0 <= float(lora_dropout or 0.0) < 1.0:
            raise HarnessError("--lora-dropout must be in [0, 1)")
        o["lora"] = {
            "r": r,
            "targets": parse_lora_targets(lora_targets or "q,v"),
            "alpha": float(lora_alpha) if lora_alpha is not None else 2.0 * r,
            "dropout": float(lora_dropout or 0.0),
            "dtype": lora_dtype or "fp32",
        }
    if o["precision"] not in PRECISIONS:
        raise HarnessError("unknown precision %r" % o["precision"])
    if o["optimizer"] not in OPTIMIZERS:
        raise HarnessError("unknown optimizer %r" % o["optimizer"])
    if o["recompute"] not in ("none", "full", "op"):
        raise HarnessError("recompute must be none, full or op")
    if o["recompute"] == "op" and not hasattr(_ckpt, "create_selective_checkpoint_contexts"):
        raise HarnessError("recompute op needs torch.utils.checkpoint.create_selective_checkpoint_contexts "
                           "(PyTorch >= 2.4)")
    if not 1 <= o["recompute_stride"] <= c["layers"]:
        raise HarnessError("recompute stride must be from 1 to the %d layers" % c["layers"])
    if o["attention"] not in ("eager", "sdpa"):
        raise HarnessError("attention must be eager or sdpa")
    if o["seq"] > c["max_seq"] and c["position"] == "learned":
        raise HarnessError("seq %d exceeds max_seq %d" % (o["seq"], c["max_seq"]))
    if model_family(c) == "gpt2" and o["seq"] > c["max_seq"]:
        raise HarnessError("seq %d exceeds max_seq %d (GPT-2 causal buffer)" % (o["seq"], c["max_seq"]))
    if device == "cpu" and o["precision"] in ("fp16-mixed", "fp16"):
        raise HarnessError("%s is not supported on CPU by torch %s (CPU autocast and CPU matmul support "
                           "bfloat16 only); use --device cuda" % (o["precision"], torch.__version__))
    return c, o


def _compile_model(model, o, ids, labels):
    """torch.compile as torchtune's training.compile_model and compile_loss
    do it: each decoder layer compiled in place (nn.Module.compile, backend
    inductor), so a checkpoint around a layer stays outside its compiled
    region; with "blocks+loss" the cross-entropy too.  Compiling happens at
    the first call: one forward and backward are run here, before the
    optimizer exists and outside the profiled steps, and the gradients they
    made are dropped, so the measured steps see only the compiled code's
    allocations (compile-time work allocates on the CPU too)."""
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    # Dynamo keeps the graphs of earlier measurements in this process, and
    # past torch._dynamo.config.recompile_limit (8) graphs for one code
    # object it runs the layer eagerly: start afresh (Inductor's on-disk
    # cache still spares the C++ compilation).
    torch._dynamo.reset()
    if o["compile"].startswith("wrapped"):
        _compile_wrapped(model, o)
    else:
        for layer in model.layers:
            layer.compile(backend="inductor")
    if o["compile"].endswith("+loss"):
        model.loss_fn = torch.compile(F.cross_entropy, backend="inductor")
        # torchtune's chunked loss: only the per-chunk cross-entropy is
        # compiled (the head stays eager: chunked_output is not a layer).
        model.chunk_ce = torch.compile(_tt_compute_cross_entropy, backend="inductor")
    with _autocast_ctx(o["precision"], o["device"]):
        loss = model(ids, labels)
    loss.backward()
    del loss
    for p in model.parameters():
        p.grad = None
    gc.collect()


def _compile_wrapped(model, o):
    """torchtitan v0.2.2's order (llama3/infra/parallelize.py:
    parallelize_llama calls apply_ac, then apply_compile): every N-th
    block (torchtitan's ac freq, counted from 1 as _apply_layer_sac does)
    becomes ptd_checkpoint_wrapper(block, ...) -- under --recompute op
    with the op-level policy's context_fn (_op_sac_context), preserve_rng
    _state and early_stop as the harness's eager checkpoint passes them --
    and then each block, wrapped or not, is replaced by
    torch.compile(block, backend, fullgraph=True).  The blocks then run
    without the harness's own checkpoint call (model.recompute = 0)."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    stride = int(model.recompute or 0)
    op = isinstance(model.recompute, OpSAC)
    for i, layer in enumerate(list(model.layers)):
        if stride and (i + 1) % stride == 0:
            kw = {"context_fn": _op_sac_context} if op else {}
            layer = checkpoint_wrapper(layer, preserve_rng_state=True, early_stop=False, **kw)
        model.layers[i] = torch.compile(layer, backend="inductor", fullgraph=True)
    model.recompute = 0


def plain_step(forward, opt, scaler, precision, device):
    """One training step without the phase marks, for callers that only
    read the peaks afterwards (calibrate.py's DDP point, heldout.py's
    Hugging Face rows): forward() returns the loss under autocast."""
    with _autocast_ctx(precision, device):
        loss = forward()
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    else:
        loss.backward()
        opt.step()
    opt.zero_grad(set_to_none=True)
    del loss


def _train_step(model, ids, labels, opt, o, scaler, info):
    with _autocast_ctx(o["precision"], o["device"]):
        loss = model(ids, labels)
    with phase("backward"):
        if scaler is not None:
            scaler.scale(loss).backward()
        else:
            loss.backward()
    params = [p for p in model.parameters()]
    info["grad_bytes"] = _unique_bytes([p.grad for p in params])
    with phase("optimizer"):
        # optimizer in backward: the hooks have stepped (a no-op here)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
    with phase("zero_grad"):
        opt.zero_grad(set_to_none=True)
        info["loss"] = float(loss.item())
        del loss


def measure(model_cfg, device="cpu", precision=None, optimizer=None, micro_batch=None, seq=None,
            recompute=None, attention=None, dropout=None, steps=2, seed=0, trace=False,
            num_threads=2, trace_out=None, keep_replay=False, lora_r=0, lora_targets=None,
            lora_alpha=None, lora_dropout=0.0, lora_dtype="fp32", loss="full",
            optimizer_impl="default", recompute_stride=1, optimizer_in_bwd=False, float8=None,
            compile_mode="none", activation_offload=False, quant="none"):
    """Measure one training configuration; returns the result dict.
    keep_replay=True (in-process use only) adds the AllocReplay object under
    the key "_replay" (not JSON-serializable).  lora_r > 0: PEFT LoRA on a
    frozen base (see apply_lora); loss="chunked": Liger's fused linear CE;
    optimizer_in_bwd: torchtune's optimizer in backward (InBackwardOptimizer);
    compile_mode: torch.compile per block (and of the loss), see COMPILE_MODES;
    activation_offload: torchtune's OffloadActivations around the model
    but its head (HostOffload)."""
    t_start = time.time()
    c, o = _resolve(model_cfg, device, precision, optimizer, micro_batch, seq, recompute, attention, dropout,
                    lora_r, lora_targets, lora_alpha, lora_dropout, lora_dtype, loss, recompute_stride,
                    optimizer_in_bwd, float8, compile_mode, activation_offload, quant)
    if device == "cuda" and not torch.cuda.is_available():
        raise HarnessError("--device cuda but torch.cuda.is_available() is False")
    torch.set_num_threads(int(num_threads))
    fam = model_family(c)
    torch.manual_seed(seed)
    _SDPA_SEED[0] = seed * 1000003
    cuda_before = None
    if device == "cuda":
        record_device_used_before_context()   # before torch.cuda.init (first call only)
        torch.cuda.init()
        _t = torch.empty(1, device="cuda")   # create the context before the "before" figure
        del _t
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        cuda_before = _cuda_device_used()
    if activation_offload and fam != "llama":
        raise HarnessError("--activation-offload is implemented for the Llama-style family only")
    _OFFLOAD[0] = (SaveOnCpu() if activation_offload == "save_on_cpu" else
                   HostOffload() if activation_offload else None)
    model = build_model(c, o["attention"], o["recompute_stride"] if o["recompute"] == "full" else
                        OpSAC(o["recompute_stride"]) if o["recompute"] == "op" else 0, o["loss"])
    model.train()
    lo = o["lora"]
    lora_info = None
    if lo is not None:
        # LoRA: the base model is loaded in bf16 for bf16-mixed and bf16
        # (fp32 for fp32), frozen; the adapters are then added in their dtype.
        if o["precision"] in ("bf16", "bf16-mixed"):
            model.to(torch.bfloat16)
        elif o["precision"] in ("fp16", "fp16-mixed"):
            model.to(torch.float16)
        if o["quant"] == "nf4":
            apply_nf4(model, fam)
        targets, names = apply_lora(model, fam, c, lo)
        if "head" in targets and o["loss"] != "full":
            raise HarnessError("--loss %s: no adapter on the head is cloned under it" % o["loss"])
        lora_info = dict(lo)
        lora_info.update({"targets": targets, "modules": names, "n_modules": len(names),
                          "scaling": lo["alpha"] / lo["r"],
                          "input_require_grads": o["recompute"] != "none"})
        if o["recompute"] != "none":
            _enable_input_require_grads(model, fam)
    elif o["precision"] == "bf16":
        model.to(torch.bfloat16)
    elif o["precision"] == "fp16":
        model.to(torch.float16)
    model.to(device)
    if o["float8"] != "none":
        apply_float8(model, o["float8"])
    gen = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, c["vocab"], (o["micro_batch"], o["seq"]), generator=gen).to(device)
    labels = ids
    if o["compile"] != "none":
        _compile_model(model, o, ids, labels)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if o["optimizer_in_bwd"]:
        opt = InBackwardOptimizer(o["optimizer"], trainable, device, optimizer_impl)
    else:
        opt = make_optimizer(o["optimizer"], trainable, device, optimizer_impl)
    scaler = None
    if o["precision"] == "fp16-mixed":
        scaler = torch.cuda.amp.GradScaler()
    params = list(model.parameters())
    buffers = list(model.buffers())
    seen = {}
    weights_bytes = _unique_bytes(params, seen)
    buffers_bytes = _unique_bytes(buffers, seen)
    inputs_bytes = _unique_bytes([ids, labels], seen)
    baseline = weights_bytes + buffers_bytes + inputs_bytes
    res = {
        "harness_version": HARNESS_VERSION,
        "torch": torch.__version__,
        "model": c["name"],
        "family": fam,
        "config": {k: v for k, v in c.items()},
        "device": device,
        "precision": o["precision"],
        "optimizer": o["optimizer"],
        "foreach": effective_foreach(opt),
        "optimizer_in_bwd": o["optimizer_in_bwd"],
        "float8": o["float8"],
        "compile": o["compile"],
        "quant": o["quant"],
        "activation_offload": activation_offload if activation_offload == "save_on_cpu" else
                              bool(activation_offload),
        "micro_batch": o["micro_batch"],
        "seq": o["seq"],
        "recompute": o["recompute"],
        "recompute_stride": o["recompute_stride"],
        "attention": o["attention"],
        "attention_impl": ("torch-nn" if fam == "torch-nn" else
                           ("eager" if o["attention"] == "eager" else sdpa_impl_name())),
        "dropout": c["dropout"],
        "steps": int(steps),
        "seed": seed,
        "num_threads": torch.get_num_threads(),
        "params": sum(p.numel() for p in {id(p): p for p in params}.values()),
        "trainable_params": sum(p.numel() for p in {id(p): p for p in trainable}.values()),
        "trainable_bytes": _unique_bytes(trainable),
        "lora": lora_info,
        "loss_impl": o["loss"],
        "weights_bytes": weights_bytes,
        "buffers_bytes": buffers_bytes,
        "inputs_bytes": inputs_bytes,
        "baseline_bytes": baseline,
    }
    if device == "cpu" and o["recompute"] != "none":
        # checkpoint(preserve_rng_state=True) keeps torch.get_rng_state()
        # (a CPU uint8 tensor) per checkpointed block until its backward.
        res["cpu_rng_state_bytes"] = int(torch.get_rng_state().numel())
    if o["attention"] == "sdpa" and fam != "torch-nn" and not hasattr(F, "scaled_dot_product_attention"):
        res["sdpa_block_elems"] = ATTN_BLOCK_ELEMS
    if o["loss"] == "chunked":
        bt = o["micro_batch"] * (o["seq"] - (1 if fam != "bert" else 0))
        cs, nc = flce_chunking(bt, c["hidden"], c["vocab"])
        res["chunked_loss"] = {"rows": bt, "chunk_size": cs, "num_chunks": nc,
                               "ce_block_elems": CE_BLOCK_ELEMS,
                               "ce_block_rows": max(1, min(cs, CE_BLOCK_ELEMS // c["vocab"]))}
    gc.collect()
    info = {}
    if device == "cpu":
        rep = _measure_cpu(res, model, ids, labels, opt, o, scaler, info, params, buffers, steps, trace)
        if keep_replay:
            res["_replay"] = rep
    else:
        _measure_cuda(res, model, ids, labels, opt, o, scaler, info, steps, cuda_before)
    res["grad_bytes"] = info.get("grad_bytes")
    res["optimizer_state_bytes"] = _unique_bytes(_optimizer_tensors(opt))
    res["final_loss"] = info.get("loss")
    if trace:
        res["trace"] = res.get("trace", {})
        res["trace"]["saved"] = trace_saved_tensors(model, ids, labels, o, params, buffers, trace_out)
    res["elapsed_s"] = round(time.time() - t_start, 3)
    del model, opt, ids, labels, params, buffers, trainable
    gc.collect()
    return res


def _profile_cpu(fn):
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=False) as prof:
        fn()
    return prof


def measure_callable(fn, live=()):
    """Exact CPU peak of an arbitrary callable: `live` are the tensors alive
    before it runs (their storages, counted once, form the baseline).  Used
    by tests/validate_cpu.py --selftest on hand-computable cases; fn may
    use phase(...) markers."""
    baseline = _unique_bytes(live)
    gc.collect()
    prof = _profile_cpu(fn)
    rep = AllocReplay(prof, baseline)
    peak, peak_i, ph, st, per = rep.summarize()
    return {"baseline_bytes": baseline, "allocated_peak_bytes": peak, "peak_phase": ph,
            "end_bytes": rep.end_bytes, "order_consistent": rep.order_consistent,
            "foreign_frees": rep.foreign_frees, "alloc_events": rep.n_alloc,
            "threads_with_events": len(rep.tids),
            "phases": {p: v for (s, p), v in per.items()}}


def _measure_cpu(res, model, ids, labels, opt, o, scaler, info, params, buffers, steps, trace):
    step_seconds = []

    def run():
        for step in range(1, int(steps) + 1):
            _STEP[0] = step
            t0 = time.perf_counter()
            _train_step(model, ids, labels, opt, o, scaler, info)
            # wall time of the step under the memory profiler (inflated by it)
            step_seconds.append(time.perf_counter() - t0)
    try:
        prof = _profile_cpu(run)
    finally:
        _STEP[0] = 0
    res["step_seconds"] = [round(t, 6) for t in step_seconds]
    rep = AllocReplay(prof, res["baseline_bytes"])
    peak, peak_i, ph, st, per = rep.summarize()
    res["allocated_peak_bytes"] = peak
    res["peak_phase"] = ph
    res["peak_step"] = st
    phases = {}
    for (s, p), v in per.items():
        d = phases.setdefault(p, {"peak_bytes": 0})
        d["peak_bytes"] = max(d["peak_bytes"], v["peak_bytes"])
    res["phases"] = {p: phases[p] for p in PHASES if p in phases}
    res["steps_detail"] = [
        {p: per[(s, p)] for p in PHASES if (s, p) in per} for s in range(1, int(steps) + 1)]
    # closure: what the replay says is live at the end must be exactly the
    # storages we can enumerate (weights, buffers, inputs, optimizer state)
    seen = {}
    expect = _unique_bytes(params, seen) + _unique_bytes(buffers, seen) + _unique_bytes([ids, labels], seen)
    expect += _unique_bytes(_optimizer_tensors(opt), seen)
    expect += _unique_bytes([p.grad for p in params], seen)
    res["checks"] = {
        "end_bytes_replay": rep.end_bytes,
        "end_bytes_enumerated": expect,
        "closure_ok": rep.end_bytes == expect,
        "order_consistent": rep.order_consistent,
        "foreign_frees": rep.foreign_frees,
        "alloc_events": rep.n_alloc,
        "free_events": rep.n_free,
        "threads_with_events": len(rep.tids),
    }
    if trace and peak_i >= 0:
        top, groups, tot = rep.live_at(peak_i)
        res["trace"] = {"peak_live_top": top, "peak_live_by_phase_allocated": groups,
                        "peak_live_nonbaseline_bytes": tot}
    return rep


_PRE_CONTEXT_USED = {}


def record_device_used_before_context(index=0):
    """NVML's used bytes of GPU `index` before this process creates its CUDA
    context (other processes + driver reservations).  Recorded once per
    process, and only while CUDA is not initialized yet; needs pynvml.
    Returns the figure or None."""
    if "nvml_used_bytes" in _PRE_CONTEXT_USED or "tried" in _PRE_CONTEXT_USED:
        return _PRE_CONTEXT_USED.get("nvml_used_bytes")
    _PRE_CONTEXT_USED["tried"] = True
    try:
        if torch.cuda.is_initialized():
            return None
    except Exception:  # pragma: no cover
        return None
    try:
        import pynvml
        pynvml.nvmlInit()
        h = _nvml_handle(pynvml, index, use_torch=False)
        _PRE_CONTEXT_USED["nvml_used_bytes"] = int(pynvml.nvmlDeviceGetMemoryInfo(h).used)
    except Exception:
        pass
    return _PRE_CONTEXT_USED.get("nvml_used_bytes")


def _nvml_handle(pynvml, index, use_torch=True):
    """The NVML handle of torch's CUDA device `index`.  NVML ignores
    CUDA_VISIBLE_DEVICES, so match by UUID when torch reports one (torch >=
    2.1), else map through CUDA_VISIBLE_DEVICES, else the same index."""
    if use_torch:
        try:
            uuid = str(torch.cuda.get_device_properties(index).uuid)
            if uuid:
                if not uuid.startswith(("GPU-", "MIG-")):
                    uuid = "GPU-" + uuid
                return pynvml.nvmlDeviceGetHandleByUUID(uuid)
        except Exception:
            pass
    vis = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    if index < len(vis):
        v = vis[index]
        if v.isdigit():
            return pynvml.nvmlDeviceGetHandleByIndex(int(v))
        return pynvml.nvmlDeviceGetHandleByUUID(v)
    return pynvml.nvmlDeviceGetHandleByIndex(index)


def _cuda_device_used():
    out = {}
    try:
        free, total = torch.cuda.mem_get_info()
        out["mem_get_info_used_bytes"] = int(total - free)
        out["mem_get_info_total_bytes"] = int(total)
    except Exception as e:  # pragma: no cover
        out["mem_get_info_error"] = str(e)
    try:
        import pynvml
        pynvml.nvmlInit()
        idx = torch.cuda.current_device()
        h = _nvml_handle(pynvml, idx)
        out["nvml_used_bytes"] = int(pynvml.nvmlDeviceGetMemoryInfo(h).used)
    except Exception:
        pass
    return out


def _measure_cuda(res, model, ids, labels, opt, o, scaler, info, steps, cuda_before):
    """Per-phase peaks from the caching allocator: at each phase boundary,
    synchronize, read max_memory_allocated, reset the peak counters."""
    rec = {}
    state = {"step": 0, "start": 0}

    def hook(ev, name):
        torch.cuda.synchronize()
        if ev == "enter":
            state["start"] = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        else:
            rec[(state["step"], name)] = {
                "start_bytes": state["start"],
                "peak_bytes": int(torch.cuda.max_memory_allocated()),
                "end_bytes": int(torch.cuda.memory_allocated()),
                "reserved_peak_bytes": int(torch.cuda.max_memory_reserved()),
            }
            torch.cuda.reset_peak_memory_stats()

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base_alloc = torch.cuda.memory_allocated()
    _PHASE_HOOKS.append(hook)
    step_seconds = []
    try:
        for step in range(1, int(steps) + 1):
            _STEP[0] = step
            state["step"] = step
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            _train_step(model, ids, labels, opt, o, scaler, info)
            torch.cuda.synchronize()
            # includes the phase hooks' synchronize/counter reads (small)
            step_seconds.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        rest_peak = int(torch.cuda.max_memory_allocated())   # between phases
    finally:
        _PHASE_HOOKS.remove(hook)
        _STEP[0] = 0
    res["step_seconds"] = [round(t, 6) for t in step_seconds]
    best = (base_alloc, None, None)
    for (s, p), v in sorted(rec.items()):
        if v["peak_bytes"] > best[0]:
            best = (v["peak_bytes"], p, s)
    res["cuda_allocated_before_bytes"] = int(base_alloc)
    res["allocated_peak_bytes"] = max(best[0], rest_peak)
    res["peak_phase"], res["peak_step"] = best[1], best[2]
    res["reserved_peak_bytes"] = max([v["reserved_peak_bytes"] for v in rec.values()] + [0])
    phases = {}
    for (s, p), v in rec.items():
        d = phases.setdefault(p, {"peak_bytes": 0})
        d["peak_bytes"] = max(d["peak_bytes"], v["peak_bytes"])
    res["phases"] = {p: phases[p] for p in PHASES if p in phases}
    res["steps_detail"] = [{p: rec[(s, p)] for p in PHASES if (s, p) in rec} for s in range(1, int(steps) + 1)]
    res["device_used_before"] = cuda_before
    after = _cuda_device_used()   # reserved blocks still cached (no empty_cache yet)
    res["device_used_after"] = after
    # what nvidia-smi shows at the peak: context + reserved peak (the caching
    # allocator keeps its segments until empty_cache) + cuBLAS/NCCL/etc.
    res["device_peak_bytes"] = after.get("nvml_used_bytes", after.get("mem_get_info_used_bytes"))
    res["device_peak_source"] = ("nvml" if "nvml_used_bytes" in after else
                                 ("mem_get_info" if "mem_get_info_used_bytes" in after else None))
    res["device_used_before_context_bytes"] = _PRE_CONTEXT_USED.get("nvml_used_bytes")
    res["cuda_device_name"] = torch.cuda.get_device_name()


# ----------------------------------------------------------------------------
# --trace: what each autograd node saves
# ----------------------------------------------------------------------------

def _node_saved(node):
    out = []
    for a in dir(node):
        if not a.startswith("_saved_"):
            continue
        try:
            v = getattr(node, a)
        except Exception:
            continue
        vals = v if isinstance(v, (tuple, list)) else (v,)
        for j, t in enumerate(vals):
            if isinstance(t, torch.Tensor):
                out.append((a[len("_saved_"):] + ("[%d]" % j if len(vals) > 1 else ""), t))
    if not out and hasattr(node, "saved_tensors"):   # python autograd.Function
        try:
            for j, t in enumerate(node.saved_tensors):
                if isinstance(t, torch.Tensor):
                    out.append(("saved[%d]" % j, t))
        except Exception:
            pass
    return out


def trace_saved_tensors(model, ids, labels, o, params, buffers, out_stream=None):
    """One extra forward (outside the measured run) with saved_tensors_hooks
    counting every tensor autograd saves (deduplicated by storage), then a
    walk of the graph attributing each saved tensor to its node."""
    model.zero_grad(set_to_none=True)
    packed = []

    def pack(t):
        packed.append((t, _TRACE_SCOPE[0]))
        return t

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        with _autocast_ctx(o["precision"], o["device"]):
            loss = model(ids, labels)
    pkeys = {}
    for t in _inner_tensors(params):
        pkeys[_storage(t)[0]] = "param"
    for t in buffers:
        pkeys.setdefault(_storage(t)[0], "buffer")
    pkeys.setdefault(_storage(ids)[0], "input")
    # post-order walk from the loss -> inputs before consumers (forward order)
    order, seen_nodes = [], set()
    stack = [(loss.grad_fn, False)]
    while stack:
        n, done = stack.pop()
        if n is None:
            continue
        if done:
            order.append(n)
            continue
        if n in seen_nodes:
            continue
        seen_nodes.add(n)
        stack.append((n, True))
        for nxt, _ in reversed(n.next_functions):
            if nxt is not None and nxt not in seen_nodes:
                stack.append((nxt, False))
    seen_storage = {}
    nodes = []
    by_kind = {}
    total_new = 0
    for n in order:
        sv = _node_saved(n)
        if not sv:
            continue
        ents = []
        for nm, t in sv:
            if hasattr(t, "__tensor_flatten__"):
                # torchao's NF4 weight, a parameter (saved by LinearNF4)
                ents.append({"name": nm, "shape": list(t.shape), "dtype": "nf4", "bytes": 0,
                             "storage_bytes": 0, "tag": "param"})
                continue
            key, nb = _storage(t)
            tag = pkeys.get(key)
            if tag is None:
                if key in seen_storage:
                    tag = "shared:" + seen_storage[key]
                else:
                    tag = "new"
                    seen_storage[key] = n.name()
                    total_new += nb
                    k = (n.name(), str(t.dtype).replace("torch.", ""))
                    e = by_kind.setdefault(k, [0, 0])
                    e[0] += 1
                    e[1] += nb
            ents.append({"name": nm, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                         "bytes": t.numel() * t.element_size(), "storage_bytes": nb, "tag": tag})
        nodes.append({"node": n.name(), "saved": ents})
    # pack-hook accounting (includes tensors saved by nodes not reachable,
    # e.g. inside checkpointed regions the hooks are the checkpoint's own)
    pk_seen = {}
    pk_new = 0
    lora_parts = {}
    for t, scope in packed:
        if hasattr(t, "__tensor_flatten__"):
            continue
        key, nb = _storage(t)
        if key in pkeys or key in pk_seen:
            continue
        pk_seen[key] = nb
        pk_new += nb
        if scope is not None:
            # first save of this storage happened inside a LoRA branch
            k = (scope, str(t.dtype).replace("torch.", ""), tuple(t.shape))
            e = lora_parts.setdefault(k, [0, 0])
            e[0] += 1
            e[1] += nb
    out = {
        "saved_activation_bytes_graph": total_new,
        "saved_activation_bytes_hooks": pk_new,
        "packed_tensors": len(packed),
        "by_node_dtype": [{"node": k[0], "dtype": k[1], "count": v[0], "bytes": v[1]}
                          for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1][1])],
        "nodes": nodes,
    }
    if o.get("lora") is not None:
        out["lora_saved"] = [{"part": k[0], "dtype": k[1], "shape": list(k[2]), "count": v[0], "bytes": v[1]}
                             for k, v in lora_parts.items()]
        out["lora_saved_bytes"] = sum(v[1] for v in lora_parts.values())
    loss.backward()
    model.zero_grad(set_to_none=True)
    del loss, packed
    return out


def format_trace(res, max_nodes=None):
    lines = []
    tr = res.get("trace", {})
    lines.append("# %s  %s %s b=%d s=%d %s attn=%s dropout=%g recompute=%s loss=%s%s" % (
        res["model"], res["family"], res["precision"], res["micro_batch"], res["seq"], res["optimizer"],
        res["attention"], res["dropout"], res["recompute"], res.get("loss_impl", "full"),
        (" lora=%d" % res["lora"]["r"]) if res.get("lora") else ""))
    if res.get("chunked_loss"):
        cl = res["chunked_loss"]
        lines.append("# chunked loss: %d rows, chunk_size %d, %d chunks, CE row blocks of %d rows" % (
            cl["rows"], cl["chunk_size"], cl["num_chunks"], cl["ce_block_rows"]))
    sv = tr.get("saved")
    if sv:
        lines.append("## saved for backward (forward order; 'new' = first save of a storage, counted once)")
        for i, n in enumerate(sv["nodes"]):
            if max_nodes is not None and i >= max_nodes:
                lines.append("  ... %d more nodes" % (len(sv["nodes"]) - max_nodes))
                break
            parts = []
            for e in n["saved"]:
                parts.append("%s%s %s %dB %s" % (e["name"], tuple(e["shape"]), e["dtype"], e["bytes"],
                                                  e["tag"] if e["tag"] == "new" else "(" + e["tag"] + ")"))
            lines.append("  %-28s %s" % (n["node"], "; ".join(parts)))
        lines.append("## unique saved activation bytes: graph %d, pack hooks %d" % (
            sv["saved_activation_bytes_graph"], sv["saved_activation_bytes_hooks"]))
        if res["recompute"] == "full":
            lines.append("## (recompute full: reading a checkpointed node's saved tensors triggers the block's "
                         "recomputation, so 'graph' lists what blocks save when recomputed in backward; "
                         "'pack hooks' counts only what is saved outside checkpointed blocks)")
        for e in sv["by_node_dtype"]:
            lines.append("  %-28s %-9s x%-4d %d" % (e["node"], e["dtype"], e["count"], e["bytes"]))
        if "lora_saved" in sv:
            lo = res.get("lora") or {}
            lines.append("## LoRA r=%s targets=%s dropout=%g adapters %s (%d modules, %d trainable params): "
                         "saved tensors first saved inside the adapter branches (pack hooks, unique storages), "
                         "%d bytes" % (lo.get("r"), ",".join(lo.get("targets", [])), lo.get("dropout", 0),
                                       lo.get("dtype"), lo.get("n_modules", 0), res.get("trainable_params", 0),
                                       sv["lora_saved_bytes"]))
            for e in sv["lora_saved"]:
                lines.append("  %-26s %-9s %-18s x%-4d %d" % (e["part"], e["dtype"], tuple(e["shape"]),
                                                               e["count"], e["bytes"]))
            if res["recompute"] == "full":
                lines.append("  (recompute full: branches inside checkpointed blocks save under the checkpoint's "
                             "own hooks and do not appear here)")
    if "peak_live_top" in tr:
        lines.append("## largest allocations of step %s live at the peak (%s): %d bytes = baseline %d + %d" % (
            res["peak_step"], res["peak_phase"], res["allocated_peak_bytes"], res["baseline_bytes"],
            tr["peak_live_nonbaseline_bytes"]))
        for e in tr["peak_live_top"]:
            lines.append("  %10d  %-16s %s" % (e["bytes"], e["allocated_in"], e["op"]))
        lines.append("  by phase of allocation: " + ", ".join(
            "%s=%d" % kv for kv in sorted(tr["peak_live_by_phase_allocated"].items())))
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description="measure the memory of a PyTorch training step")
    ap.add_argument("model")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--precision", choices=PRECISIONS)
    ap.add_argument("--optimizer", choices=OPTIMIZERS)
    ap.add_argument("--micro-batch", type=int)
    ap.add_argument("--seq", type=int)
    ap.add_argument("--recompute", choices=("none", "full", "op"))
    ap.add_argument("--recompute-stride", type=int, default=1, metavar="N",
                    help="checkpoint only every N-th block (torchtitan's selective_ac_option N)")
    ap.add_argument("--attention", choices=("eager", "sdpa"))
    ap.add_argument("--dropout", type=float)
    ap.add_argument("--lora", type=int, default=0, metavar="R", help="LoRA rank (0 = off: full fine-tuning)")
    ap.add_argument("--lora-targets", default="q,v",
                    help="comma list of q,k,v,o,gate,up,down, or all-linear (default q,v)")
    ap.add_argument("--lora-alpha", type=float, help="LoRA alpha (default 2*R; only a scale)")
    ap.add_argument("--lora-dropout", type=float, default=0.0)
    ap.add_argument("--lora-dtype", default="fp32", choices=tuple(LORA_DTYPES))
    ap.add_argument("--loss", default="full", choices=LOSSES,
                    help="full: logits + cross_entropy; chunked: Liger fused linear cross-entropy")
    ap.add_argument("--optimizer-impl", default="default", choices=OPTIMIZER_IMPLS,
                    help="torch.optim's foreach= / fused= (default: torch's choice)")
    ap.add_argument("--optimizer-in-backward", action="store_true",
                    help="torchtune's optimizer_in_bwd: each parameter steps in its gradient hook (torch >= 2.1)")
    ap.add_argument("--quant", choices=QUANTS, default="none",
                    help="nf4: torchtune's QLoRA base (torchao NF4Tensor, linear_nf4) under --lora")
    ap.add_argument("--float8", choices=("none", "tensorwise", "rowwise"), default="none",
                    help="torchao float8 training of the block linears (torchtitan's converter)")
    ap.add_argument("--compile", default="none", choices=COMPILE_MODES,
                    help="torch.compile each decoder layer (and the loss), as torchtune does; "
                         "wrapped: the checkpoint-wrapped layer, as torchtitan does")
    ap.add_argument("--activation-offload", nargs="?", const=True, default=False,
                    choices=(True, "torchtune", "save_on_cpu"),
                    help="torchtune's OffloadActivations (host copies outside the allocator); "
                         "save_on_cpu: torch.autograd.graph.save_on_cpu instead")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trace", action="store_true",
                    help="add saved-tensor and peak-live listings (JSON 'trace'; readable form on stderr)")
    a = ap.parse_args(argv)
    try:
        cfg = load_model_cfg(a.model)
        res = measure(cfg, device=a.device, precision=a.precision, optimizer=a.optimizer,
                      micro_batch=a.micro_batch, seq=a.seq, recompute=a.recompute, attention=a.attention,
                      dropout=a.dropout, steps=a.steps, seed=a.seed, trace=a.trace, num_threads=a.threads,
                      lora_r=a.lora, lora_targets=a.lora_targets, lora_alpha=a.lora_alpha,
                      lora_dropout=a.lora_dropout, lora_dtype=a.lora_dtype, loss=a.loss,
                      optimizer_impl=a.optimizer_impl, recompute_stride=a.recompute_stride,
                      optimizer_in_bwd=a.optimizer_in_backward, float8=a.float8,
                      compile_mode=a.compile, activation_offload=a.activation_offload,
                      quant=a.quant)
    except HarnessError as e:
        print("harness: %s" % e, file=sys.stderr)
        return 2
    if a.trace:
        print(format_trace(res), file=sys.stderr)
    print(json.dumps(res, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
