"""Jobs: what one command does (cache, intervene, probe sweep, cliques, location sweep, behavioral table, demo), built on the layers below."""
