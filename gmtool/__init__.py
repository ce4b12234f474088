"""gmtool: GM operations console and rule-configuration CLI for showhand card games."""

__version__ = "0.1.0"
