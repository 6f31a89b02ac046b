"""The names the language fixes: fusion modes and tensor roles (plain tuples, no sympy, so the
command line can offer them as choices without importing the analysis)."""

__all__ = ["FUSION_MODES", "ROLES", "RESIDENT_ROLES"]

FUSION_MODES = ("none", "elementwise", "epilogue", "flash")
ROLES = ("input", "weight", "cache", "gradient", "state", "intermediate", "output")
#: roles whose tensors stay in memory for the whole program (counted × their repeat count)
RESIDENT_ROLES = ("weight", "cache", "gradient", "state")  # gradient: a training step's gradient buffer;
#: state: an optimizer's states and master weights (stdlib/train.cost)
