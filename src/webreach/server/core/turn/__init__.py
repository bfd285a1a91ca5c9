"""One request as the loop sees it, whatever its protocol: the turn, what it reports, what it may
spend, and its record in the operator's log."""
