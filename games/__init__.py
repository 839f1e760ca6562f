"""Games registered with pyspiel on import (one module per game)."""
