"""Reverse image search providers: an image by URL or bytes → the pages that show it.

One module per service; each defines a ``PROVIDER`` spec that ``webreach.config`` finds.
"""
