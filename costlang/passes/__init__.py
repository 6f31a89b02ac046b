"""Passes over the operator graph: partitions of its ops into kernels (fusion)."""
