"""MQNLI (Geiger et al. 2018, 2019): the generator (:mod:`.generate`), its JSONL files (:mod:`.files`) and the tree as a causal model (:mod:`.causal_model`)."""
