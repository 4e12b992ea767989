"""The monotonicity fragment generator (Richardson, Hu, Moss & Sabharwal 2020, Appendix and Figure 8).

``lexicon`` (words, the ≤ order, antonyms, determiner readings) ->
``grammar`` (Figure 8's regular grammar as trees) -> ``polarity`` (the
monotonicity calculus over the tree) -> ``substitution`` (entailment,
neutral and contradiction steps) -> ``generate`` (balanced labelled pairs,
``interp fragments generate``); ``semantics`` checks every label in finite
models, independently of the calculus; ``compare`` sets a generated file
beside the released fragment.
"""
