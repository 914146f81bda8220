"""The one error type for user mistakes (bad cards, decks, files, options).

The CLI turns it into a one-line message and exit code 2; everything else is a bug.
"""


class PasurInputError(ValueError):
    """Bad input from a user: the message names the offending token, position or file."""
