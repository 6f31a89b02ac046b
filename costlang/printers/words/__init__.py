"""Words: the phrase tables (English, Korean) and the sentences that name verdicts, bounds and
solve cases. Every sentence a printer prints comes from here."""
