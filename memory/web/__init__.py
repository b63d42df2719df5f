"""The memory app's browser pages: the Memory home, the entry browser, the search playground
and the re-checking page."""
