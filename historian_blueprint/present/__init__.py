"""How Historian's results leave it: the export formats of answers and maps (``formats``)."""
