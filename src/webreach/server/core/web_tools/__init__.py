"""The web calls the server gives the upstream model: search, read a link, open and find."""
