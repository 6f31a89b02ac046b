"""Text printers: the terminal report of a run, what-if tables, hardware sheets, validation."""
