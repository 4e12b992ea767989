"""interp: mechanistic interpretability of NLI models.

Implements the method of Geiger, Richardson & Potts (2020), "Neural Natural
Language Inference Models Partially Embed Theories of Lexical Entailment and
Negation": MoNLI, behavioral evaluation, probes, interchange interventions
and clique search. Importing this package loads no model and reads no file.
"""

from interp.core.errors import (
    ConfigError,
    DataError,
    InterpError,
    ModelError,
    OutputError,
)

__version__ = "0.1.0"
__all__ = ["ConfigError", "DataError", "InterpError", "ModelError", "OutputError", "__version__"]
