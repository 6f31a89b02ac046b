"""IR: the resolved program (names, shapes, dtypes, hardware) and its operator graph."""
