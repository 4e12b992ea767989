"""Systematicity of monotonicity inference (Yanaka, Mineshima, Bekki & Inui 2020): grammar, pairs, protocols, label check, task.

``grammar`` (Table 6) -> ``generate`` (D_d^{Q,R}: one replacement at a
polarized position) -> ``protocols`` (the four train/test protocols, ``interp
monotonicity generate``); ``semantics`` checks every label in finite models;
``task`` reads a file as ``--task monotonicity``.
"""
