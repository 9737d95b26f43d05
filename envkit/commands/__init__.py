"""One module per CLI command: each turns the command's options into core calls and prints the
outcome. cli.py only wires options to these.

May import: any package above."""
