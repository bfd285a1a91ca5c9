"""The MCP server (the ``mcp`` extra): ``web_search`` and ``web_fetch`` over stdio or streamable
HTTP, with its call limits and progress, its event store for resumed streams, and how it stops."""
