"""Exception types of the rules layer; each message says what was wrong and where."""


class TammiError(ValueError):
    """Base class of every error tammi-rl raises on bad input."""


class VariantError(TammiError):
    """A variant file or name is invalid (the message names the file and key)."""


class FenError(TammiError):
    """A FEN string is malformed or describes an impossible position."""


class MoveError(TammiError):
    """A move text or action is illegal, ambiguous or malformed."""


class PdnError(TammiError):
    """A PDN game text cannot be read."""


class EngineLimitError(TammiError):
    """A position the compiled move generator cannot hold: more capture routes than its move
    buffer or a longer capture chain than it tracks (only extreme, mostly unreachable boards)."""
