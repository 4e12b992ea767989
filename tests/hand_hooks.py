"""Forward hooks written by hand on a model's own blocks: the reference the workbench's calls are held to."""

from __future__ import annotations

import torch


def blocks(module):
    """The model's own list of blocks (an encoder's layers or a decoder's blocks), found by hand."""
    base = getattr(module, "inner", module).base_model
    return base.encoder.layer if hasattr(base, "encoder") else getattr(base, "h", None) or base.layers


def by_hand(module, ids, types=None, writes=(), read=None):
    """One plain forward pass of one input with a hook on blocks' outputs: each of ``writes`` ``(block, position,
    vector)`` replaces the hidden state there; ``read`` ``(block, position)`` reads it (after any write). Returns the
    vector read (or ``None``) and the logits."""
    seen = {}

    def hook_for(block):
        def hook(_module, _inputs, output):
            hidden = output[0] if isinstance(output, tuple) else output
            mine = [(p, v) for b, p, v in writes if b == block]
            if mine:
                hidden = hidden.clone()
                for position, vector in mine:
                    hidden[0, position] = vector
                output = (hidden, *output[1:]) if isinstance(output, tuple) else hidden
            if read is not None and read[0] == block:
                seen["v"] = hidden[0, read[1]].detach().clone()
            return output

        return hook

    wanted = {b for b, _, _ in writes} | ({read[0]} if read is not None else set())
    handles = [blocks(module)[b].register_forward_hook(hook_for(b)) for b in sorted(wanted)]
    try:
        with torch.no_grad():
            inputs = {"input_ids": torch.tensor([list(ids)])}
            if types is not None:
                inputs["token_type_ids"] = torch.tensor([list(types)])
            logits = module(**inputs).logits[0]
    finally:
        for handle in handles:
            handle.remove()
    return seen.get("v"), logits
