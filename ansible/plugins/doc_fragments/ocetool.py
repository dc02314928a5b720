# The options every ocetool module shares (extends_documentation_fragment: ocetool.oneconnect.ocetool).
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  device:
    description: The adapter (C(0000:03:00.0), or C(emu:DIR) for an emulated one).
    type: str
  binary:
    description: The ocetool binary.
    type: path
    default: ocetool
  unbind:
    description:
      - Let ocetool hand the function from its driver (be2net) to vfio-pci for the work, and back
        afterwards (C(ocetool --unbind)); the function's network interfaces go down meanwhile.
      - Never in check mode, which reads only what it can without the hand-off.
    type: bool
    default: false
"""
