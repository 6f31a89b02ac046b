"""Data printers: JSON and CSV, numbers in SI base units, for other programs to read."""
