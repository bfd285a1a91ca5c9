"""``web_search``: the tool (``tool.py``), its arguments and filters as the model gives them, the
merging of several queries' results, and the page passages a ``medium`` or ``high`` search reads
and ranks; the output's sections are laid out in ``sections.py``."""
