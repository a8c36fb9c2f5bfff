"""Per-record differential privacy: policy functions and slowly scaling mechanisms for sums."""
