"""Analysis: kernels → costs (FLOPs, algorithmic bytes) → roofline results and query answers."""
