"""Queries: the layer above the analysis. A program's lets, queries and solves, what-if scenarios,
sweeps and curves, fusion comparisons and calibration, each answered over analysed expressions."""
