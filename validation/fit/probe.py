"""Which tensors a forward pass saves for backward, per layer (a calibration aid).

    python3 validation/fit/probe.py > probe.jsonl

For each architecture and precision it builds the model twice (1 and 2 layers), runs one
training forward, walks the autograd graph and sums the bytes of every distinct storage
saved for backward that is not a parameter. The difference between the two is what one
layer saves; the rest is the embeddings, the head and the loss. It also reports the bytes
the forward left allocated, to show what the graph walk does not see.
"""

import json
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from measure import make_batch, make_config  # noqa: E402


def layers_key(arch):
    return {"gpt2": "n_layer", "llama": "num_hidden_layers", "bert": "num_hidden_layers",
            "t5": "num_layers", "vit": "num_hidden_layers"}[arch]


def saved(loss, params):
    seen, stack, groups = {}, [loss.grad_fn], {}
    visited = set()
    while stack:
        node = stack.pop()
        if node is None or node in visited:
            continue
        visited.add(node)
        for attr in dir(node):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(node, attr)
            except Exception:
                continue
            vals = v if isinstance(v, (tuple, list)) else [v]
            for t in vals:
                if not isinstance(t, torch.Tensor) or t.device.type != "cuda":
                    continue
                st = t.untyped_storage()
                ptr = st.data_ptr()
                if ptr in params or ptr in seen:
                    continue
                seen[ptr] = st.nbytes()
                key = f"{node.name()}.{attr[7:]}:{str(t.dtype)[6:]}:{'x'.join(map(str, t.shape))}"
                groups[key] = groups.get(key, 0) + st.nbytes()
        for nxt, _ in node.next_functions:
            stack.append(nxt)
    return sum(seen.values()), groups


def run(arch, size, precision, layers, batch, seq):
    cfg, cls = make_config(arch, size)
    setattr(cfg, layers_key(arch), layers)
    if arch == "t5":
        cfg.num_decoder_layers = layers
    with torch.device("cuda"):
        model = cls(cfg)
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    data = make_batch(arch, cfg, batch, seq, torch.device("cuda"))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    if precision == "amp-bf16":
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(**data)
    else:
        out = model(**data)
    loss = out.loss
    del out
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated()
    total, groups = saved(loss, params)
    del loss, model
    torch.cuda.empty_cache()
    return {"allocated_by_forward": after - before, "saved_bytes": total, "groups": groups}


def main():
    combos = [
        ("gpt2", "small", p) for p in ("fp32", "amp-bf16", "bf16")
    ] + [("llama", "1b", p) for p in ("fp32", "amp-bf16", "bf16")] + [
        ("bert", "base", "fp32"), ("bert", "base", "amp-bf16"), ("bert", "base", "bf16"),
        ("t5", "small", "fp32"), ("t5", "small", "amp-bf16"),
        ("vit", "base", "fp32"), ("vit", "base", "amp-bf16"), ("vit", "base", "bf16"),
    ]
    batch, seq = 4, 256
    for arch, size, prec in combos:
        try:
            one = run(arch, size, prec, 1, batch, seq)
            two = run(arch, size, prec, 2, batch, seq)
            per_layer_groups = {k: two["groups"].get(k, 0) - one["groups"].get(k, 0) for k in two["groups"]}
            print(json.dumps({
                "arch": arch, "size": size, "precision": prec, "batch": batch, "seq": seq,
                "per_layer_saved": two["saved_bytes"] - one["saved_bytes"],
                "per_layer_allocated": two["allocated_by_forward"] - one["allocated_by_forward"],
                "rest_saved": 2 * one["saved_bytes"] - two["saved_bytes"],
                "rest_allocated": 2 * one["allocated_by_forward"] - two["allocated_by_forward"],
                "per_layer_groups": {k: v for k, v in per_layer_groups.items() if v},
                "one_layer_groups": one["groups"],
            }), flush=True)
        except Exception as e:
            print(json.dumps({"arch": arch, "precision": prec, "error": repr(e)}), flush=True)


if __name__ == "__main__":
    main()
