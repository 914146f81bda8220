"""Embedding CFR (issue 14, docs/embedding-cfr.md): advisor-space CFR with HandEbdNet's embedding
matrices, and the clustering baselines it is compared with at equal space."""
