"""Privacy attacks: singling out, attribute inference, distinguishing, and the known-record reconstruction of a
secret projection.

The package's modules are imported on use, not here (attribute inference and singling out load scipy and the
nearest-neighbour kernels, which the command line's start-up must not pay for).
"""

__all__ = ["attribute_inference", "distinguishing", "known_records", "singling_out", "threat_model"]
