"""Moving bytes between cards: patterns, the copy engines' peer traffic, byte checks, bandwidth."""
