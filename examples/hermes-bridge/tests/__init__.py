"""The Bridge's tests: Python's unittest, against the stand-in Hermes in ``standin/`` (put first on sys.path)."""

import os
import sys

_STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standin")
if _STANDIN not in sys.path:
    sys.path.insert(0, _STANDIN)
