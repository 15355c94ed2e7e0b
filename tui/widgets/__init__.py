"""The widgets of the walk, each in its own module with its messages."""
