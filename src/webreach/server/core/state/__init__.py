"""What the server keeps between requests, when asked to: the response store and the cipher of the
pages it hands back."""
