"""Analyses above the engine: probes and control tasks, interchange-intervention accuracy, the intervention graph and cliques."""
