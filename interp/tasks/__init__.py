"""Tasks: one folder per dataset with its loader, token roles and causal model (``monli``, ``mqnli``)."""
