"""Analysis: kernels and their costs → roofline figures per kernel and for the program (intensity,
I*, T_compute, T_memory per level, T_kernel, verdicts), the memory footprint, collectives' time,
composition (blocks and repeats) and the derivation steps behind each figure."""
