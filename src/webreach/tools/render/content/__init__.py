"""Reader mode's choice of what a page is about: its kind, the blocks that hold its content, and
the boilerplate cleaned out of them; the package beside it writes what is left as Markdown."""
