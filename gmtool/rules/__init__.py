"""Rule profiles: the format, validation with source positions, compilation, diff, edits."""
