"""Core: the error hierarchy, atomic outputs, HDF5 helpers, checksums and devices. Knows nothing of models or tasks."""
