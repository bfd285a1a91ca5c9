"""The chosen content written as Markdown (links made absolute, tables kept), and Markdown read
back as plain text for the passages a search ranks."""
