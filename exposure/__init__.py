"""The exposure ledger: which entry versions each recall served, to which key and run."""
