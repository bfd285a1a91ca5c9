"""The API server: Chat Completions, Responses and Messages. Imports tools and seam only."""
