"""Measure the real peak GPU memory of one training or inference configuration.

Run ONE configuration per process (a fresh caching allocator each time):

    python3 validation/fit/measure.py --case gpt2-train-fp32 --out DIR

It builds the model from a `transformers` config with random weights (nothing is
downloaded), writes the config.json it used to DIR/configs/<case>.json, runs three steps
and prints one JSON line with `torch.cuda.max_memory_allocated()` (reset first), the
reserved peak, per-phase peaks, and what `accelerate estimate-memory`'s method gives for
the same model (computed offline on an empty model).
"""

import argparse
import json
import os
import sys
import time
import traceback

# The cases: (arch, size, mode, precision, checkpointing, batch, seq, new_tokens).
# precision: fp32 | amp-bf16 (fp32 weights + bf16 autocast) | bf16 (pure bf16 weights).
CASES = {
    "gpt2-train-fp32": ("gpt2", "small", "train", "fp32", False, 8, 512, 0),
    "gpt2-train-amp": ("gpt2", "small", "train", "amp-bf16", False, 8, 512, 0),
    "gpt2m-train-fp32-ckpt": ("gpt2", "medium", "train", "fp32", True, 8, 512, 0),
    "gpt2m-train-amp": ("gpt2", "medium", "train", "amp-bf16", False, 4, 1024, 0),
    "gpt2l-train-bf16": ("gpt2", "large", "train", "bf16", False, 4, 512, 0),
    "llama1b-train-amp": ("llama", "1b", "train", "amp-bf16", False, 4, 1024, 0),
    "llama1b-train-bf16-ckpt": ("llama", "1b", "train", "bf16", True, 8, 1024, 0),
    "llama1b-infer-bf16": ("llama", "1b", "infer", "bf16", False, 8, 512, 128),
    "gpt2-infer-fp32": ("gpt2", "small", "infer", "fp32", False, 16, 256, 256),
    "bert-train-fp32": ("bert", "base", "train", "fp32", False, 16, 512, 0),
    "bert-train-amp": ("bert", "base", "train", "amp-bf16", False, 32, 512, 0),
    "t5s-train-fp32": ("t5", "small", "train", "fp32", False, 16, 512, 0),
    "t5b-train-amp": ("t5", "base", "train", "amp-bf16", False, 8, 512, 0),
    "vit-train-fp32": ("vit", "base", "train", "fp32", False, 32, 0, 0),
    "vit-train-amp-ckpt": ("vit", "base", "train", "amp-bf16", True, 64, 0, 0),
    # HELD_OUT below: shapes, batch sizes and modes the estimator was not calibrated on
    # (testdata/fit/h200-calibration has only the cases above).
    "qwen05b-train-amp": ("qwen2", "0.5b", "train", "amp-bf16", False, 4, 1024, 0),
    "llama1b-train-fp32": ("llama", "1b", "train", "fp32", False, 2, 512, 0),
    "gpt2m-infer-bf16": ("gpt2", "medium", "infer", "bf16", False, 32, 512, 0),
    "bert-train-bf16-ckpt": ("bert", "base", "train", "bf16", True, 64, 512, 0),
    "t5s-infer-bf16": ("t5", "small", "infer", "bf16", False, 16, 512, 64),
}

HELD_OUT = {"qwen05b-train-amp", "llama1b-train-fp32", "gpt2m-infer-bf16", "bert-train-bf16-ckpt", "t5s-infer-bf16"}


def make_config(arch, size):
    import transformers as tf

    if arch == "gpt2":
        dims = {"small": (768, 12, 12), "medium": (1024, 24, 16), "large": (1280, 36, 20)}[size]
        return tf.GPT2Config(n_embd=dims[0], n_layer=dims[1], n_head=dims[2]), tf.GPT2LMHeadModel
    if arch == "llama":
        # TinyLlama-1.1B's shape: grouped-query attention with 4 KV heads for 32 query heads.
        cfg = tf.LlamaConfig(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=22,
            num_attention_heads=32,
            num_key_value_heads=4,
            vocab_size=32000,
            max_position_embeddings=2048,
            tie_word_embeddings=False,
        )
        return cfg, tf.LlamaForCausalLM
    if arch == "qwen2":
        # Qwen2-0.5B's shape: 14 heads over 2 KV heads, tied embeddings, a 152k vocabulary.
        cfg = tf.Qwen2Config(
            hidden_size=896,
            intermediate_size=4864,
            num_hidden_layers=24,
            num_attention_heads=14,
            num_key_value_heads=2,
            vocab_size=151936,
            max_position_embeddings=4096,
            tie_word_embeddings=True,
        )
        return cfg, tf.Qwen2ForCausalLM
    if arch == "bert":
        return tf.BertConfig(), tf.BertForMaskedLM
    if arch == "t5":
        dims = {"small": (512, 2048, 6, 8), "base": (768, 3072, 12, 12)}[size]
        cfg = tf.T5Config(
            d_model=dims[0],
            d_ff=dims[1],
            num_layers=dims[2],
            num_heads=dims[3],
            d_kv=64,
            decoder_start_token_id=0,
            pad_token_id=0,
            eos_token_id=1,
        )
        return cfg, tf.T5ForConditionalGeneration
    if arch == "vit":
        return tf.ViTConfig(num_labels=1000), tf.ViTForImageClassification
    raise SystemExit(f"unknown arch {arch}")


def make_batch(arch, cfg, batch, seq, device):
    import torch

    if arch == "vit":
        px = torch.randn(batch, 3, cfg.image_size, cfg.image_size, device=device)
        return {"pixel_values": px, "labels": torch.randint(0, cfg.num_labels, (batch,), device=device)}
    vocab = cfg.vocab_size
    ids = torch.randint(0, vocab, (batch, seq), device=device)
    if arch == "t5":
        # The decoder sees a target as long as the input.
        return {"input_ids": ids, "labels": torch.randint(0, vocab, (batch, seq), device=device)}
    return {"input_ids": ids, "labels": ids.clone()}


def accelerate_estimate(cls, cfg, precision, mode):
    """accelerate estimate-memory's numbers, computed offline on an empty (meta) model."""
    out = {}
    try:
        from accelerate import init_empty_weights
        from accelerate.utils import calculate_maximum_sizes

        with init_empty_weights():
            empty = cls(cfg)
        total, largest = calculate_maximum_sizes(empty)
        # calculate_maximum_sizes counts the model's own dtype (fp32 here).
        if precision == "bf16" or mode == "infer" and precision != "fp32":
            total //= 2
        out["accelerate_total_bytes"] = int(total)
        out["accelerate_largest_layer_bytes"] = int(largest[0]) if isinstance(largest, (tuple, list)) else int(largest)
        if mode == "infer":
            out["accelerate_estimate_bytes"] = int(total)
            return out
        try:
            from accelerate.commands.estimate import estimate_training_usage

            # As `accelerate estimate-memory` computes its rows: "float32" for fp32 training,
            # "bfloat16" (mixed precision) on the fp32 size for autocast, and its bfloat16
            # row (the bf16 size) for pure bf16.
            mp = {"fp32": "float32", "amp-bf16": "bfloat16", "bf16": "bfloat16"}[precision]
            usage = estimate_training_usage(total, mp)
            if isinstance(usage, dict):
                out["accelerate_training_stages"] = {k: int(v) for k, v in usage.items()}
                out["accelerate_estimate_bytes"] = int(max(usage.values()))
            else:
                out["accelerate_estimate_bytes"] = int(usage)
        except Exception as e:  # older accelerate: "training with Adam" = 4x the model
            out["accelerate_note"] = f"estimate_training_usage unavailable ({e}); used 4x total"
            out["accelerate_estimate_bytes"] = int(total) * 4
    except Exception as e:
        out["accelerate_error"] = repr(e)
    return out


def fit_args(case):
    """The `gpu-doctor fit` arguments that describe the same run as `case`."""
    arch, _size, mode, precision, ckpt, batch, seq, new_tokens = CASES[case]
    args = ["--mode", mode, "--batch", str(batch), "--optimizer", "adamw"]
    if seq:
        args += ["--seq", str(seq)]
    if new_tokens:
        args += ["--new-tokens", str(new_tokens)]
    if precision == "fp32":
        args += ["--dtype", "fp32"]
    elif precision == "amp-bf16":
        args += ["--dtype", "fp32", "--amp", "bf16"]
    else:
        args += ["--dtype", "bf16"]
    if ckpt:
        args.append("--checkpointing")
    return args


def main():
    if sys.argv[1:2] == ["--list"]:
        print("\n".join(CASES))
        return
    if sys.argv[1:2] == ["--fit-args"]:
        print(" ".join(fit_args(sys.argv[2])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    arch, size, mode, precision, ckpt, batch, seq, new_tokens = CASES[args.case]
    t0 = time.time()
    import torch
    import transformers

    res = {
        "case": args.case,
        "arch": arch,
        "size": size,
        "mode": mode,
        "precision": precision,
        "checkpointing": ckpt,
        "batch": batch,
        "seq": seq,
        "new_tokens": new_tokens,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    try:
        import accelerate

        res["accelerate"] = accelerate.__version__
    except Exception:
        pass
    cfg, cls = make_config(arch, size)
    os.makedirs(os.path.join(args.out, "configs"), exist_ok=True)
    cfg_path = os.path.join(args.out, "configs", f"{args.case}.json")
    cfg.to_json_file(cfg_path)
    res["config"] = cfg_path
    res.update(accelerate_estimate(cls, cfg, precision, mode))

    dev = torch.device("cuda")
    torch.manual_seed(0)
    with dev:
        model = cls(cfg)
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    res["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    res["params"] = sum(p.numel() for p in model.parameters())
    res["params_unique"] = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    res["weights_bytes"] = torch.cuda.memory_allocated()
    data = make_batch(arch, cfg, batch, seq, dev)
    res["batch_bytes"] = torch.cuda.memory_allocated() - res["weights_bytes"]
    torch.cuda.reset_peak_memory_stats()
    phases = []

    def mark(name):
        torch.cuda.synchronize()
        phases.append(
            {
                "phase": name,
                "peak": torch.cuda.max_memory_allocated(),
                "allocated": torch.cuda.memory_allocated(),
            }
        )
        torch.cuda.reset_peak_memory_stats()

    overall_peak = 0
    if mode == "train":
        model.train()
        if ckpt:
            model.gradient_checkpointing_enable()
        if hasattr(model.config, "use_cache"):
            model.config.use_cache = False
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for step in range(args.steps):
            if precision == "amp-bf16":
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(**data).loss
            else:
                loss = model(**data).loss
            mark(f"forward{step}")
            loss.backward()
            del loss
            mark(f"backward{step}")
            opt.step()
            mark(f"step{step}")
            opt.zero_grad(set_to_none=True)
            mark(f"zero_grad{step}")
    elif not new_tokens:
        model.eval()
        with torch.no_grad():
            for step in range(args.steps):
                out = model(input_ids=data["input_ids"])
                del out
                mark(f"forward{step}")
    else:
        model.eval()
        ids = data["input_ids"]
        gen_cfg = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
        pad = getattr(cfg, "pad_token_id", None)
        if pad is None:
            gen_cfg["pad_token_id"] = 0
        with torch.no_grad():
            for step in range(args.steps):
                out = model.generate(ids, attention_mask=torch.ones_like(ids), **gen_cfg)
                res["generated_len"] = int(out.shape[1])
                del out
                mark(f"generate{step}")
    overall_peak = max(p["peak"] for p in phases)
    res["phases"] = phases
    res["max_memory_allocated"] = overall_peak
    res["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    free, total = torch.cuda.mem_get_info()
    res["device_used_bytes"] = total - free
    res["reserved_now"] = torch.cuda.memory_reserved()
    res["non_torch_bytes_now"] = (total - free) - torch.cuda.memory_reserved()
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == os.getpid():
                res["nvml_process_used_bytes"] = p.usedGpuMemory
    except Exception as e:
        res["nvml_error"] = repr(e)
    res["seconds"] = round(time.time() - t0, 2)
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
