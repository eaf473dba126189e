"""acpgen: Agent Client Protocol schema -> IR -> Python bindings and reference docs."""

__version__ = "0.1.0"
