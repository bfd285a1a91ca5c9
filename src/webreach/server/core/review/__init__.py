"""Model content safety (``safety_check``): who reviews, and the user's input and the model's
answer under review."""
