"""Parley's reference Hermes Bridge: the Hermes Bridge protocol v1 served by Hermes Agent's ``AIAgent``.

Run it next to a Hermes Agent install with ``python -m parley_bridge --port 8642``. The protocol is
``docs/hermes-bridge-protocol.md`` in the Parley repository; this package has no dependency beyond
Hermes Agent and the Python standard library.
"""

PROTOCOL = "hermes-bridge/1"
__version__ = "0.1.0"
