#!/usr/bin/env python3
"""PyTorch's time for the forward passes `examples/forward_time.rs` times in
cdiff: random-weight models of Dream-7B's and LLaDA-8B's shapes in bf16 on
the GPU, a canvas of TOKENS tokens, the forward alone (synchronized) and the
forward plus the logits of every row copied to the CPU in f32.

The models are Hugging Face `transformers` classes with the same shapes, not
the authors' remote code (which is not shipped here): Dream is a Qwen2 body
(`Qwen2ForCausalLM`: q/k/v biases, 4 key/value heads), LLaDA-8B a Llama-
shaped body (`LlamaForCausalLM`: 32 heads, SwiGLU of 12,288, no biases);
attention is `sdpa` with the library's causal mask, where the diffusion
models attend both ways (same cost at this length: attention is a few
percent of the FLOPs). A benchmark, not a test; `eval/gpu.sh` runs it when
`python3` has torch and transformers.

Usage: python3 eval/gpu_reference.py [TOKENS] [REPS]
"""

import statistics
import sys
import time

import torch
import transformers

SHAPES = {
    # hidden, intermediate, layers, heads, kv heads, vocab, rope theta, bias
    "dream-7b (Qwen2ForCausalLM)": (3584, 18944, 28, 28, 4, 152064, 1e6, True),
    "llada-8b (LlamaForCausalLM)": (4096, 12288, 32, 32, 32, 126464, 5e5, False),
}


def model_for(name, shape):
    hidden, inter, layers, heads, kv, vocab, theta, bias = shape
    common = dict(
        hidden_size=hidden,
        intermediate_size=inter,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        vocab_size=vocab,
        rope_theta=theta,
        rms_norm_eps=1e-6 if bias else 1e-5,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        attn_implementation="sdpa",
    )
    if name.startswith("dream"):
        cfg = transformers.Qwen2Config(**common)
        cls = transformers.Qwen2ForCausalLM
    else:
        cfg = transformers.LlamaConfig(attention_bias=False, mlp_bias=False, **common)
        cls = transformers.LlamaForCausalLM
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        m = cls(cfg)
    torch.set_default_dtype(torch.float32)
    return m.eval()


def summary(v):
    v = sorted(v)
    return f"median {statistics.median(v):.1f} ms (min {v[0]:.1f}, max {v[-1]:.1f})"


def main():
    tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{torch.cuda.get_device_name()}")
    for name, shape in SHAPES.items():
        m = model_for(name, shape)
        ids = torch.randint(0, 256, (1, tokens), device="cuda")
        fwd, full = [], []
        with torch.no_grad():
            for rep in range(reps + 2):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                logits = m(ids).logits
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                rows = logits[0].float().cpu()
                t2 = time.perf_counter()
                assert rows.shape == (tokens, shape[5])
                if rep >= 2:
                    fwd.append((t1 - t0) * 1e3)
                    full.append((t2 - t0) * 1e3)
        print(f"{name}: {tokens} tokens, bf16, {reps} reps: forward {summary(fwd)}; "
              f"with the f32 logits to the CPU {summary(full)}")
        del m, logits
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
