"""Policies written in Python for the ext class (see :mod:`schedlab.ext`)."""

from .scx_simple import ScxSimple

__all__ = ["ScxSimple"]
