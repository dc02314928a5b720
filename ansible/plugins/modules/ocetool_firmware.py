#!/usr/bin/python
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: ocetool_firmware
short_description: The firmware of an Emulex OneConnect OCe14000 adapter
description:
  - Flashes O(image) with C(ocetool fw update) when the adapter does not already hold it; only the
    sections that differ are written. Refuses an incompatible image, and an older one unless
    O(allow_downgrade).
  - Check mode runs C(--dry-run), which changes nothing. The new firmware runs after a reset
    (O(activate=reset)) or the next reboot.
  - Fails with ocetool's own error message (e.g. an image that is not flashable).
version_added: "0.1.0"
options:
  image:
    description: The C(.ufi) image on the managed host.
    type: path
    required: true
  allow_downgrade:
    description: Flash an image older than the firmware on flash.
    type: bool
    default: false
  activate:
    description:
      - C(next-boot) leaves the new firmware for the next reboot.
      - C(reset) resets the chip when new firmware is stored but not running, whether this run
        flashed it or an earlier one did (RV(reset_required)).
    type: str
    choices: [next-boot, reset]
    default: next-boot
extends_documentation_fragment:
  - ocetool.oneconnect.ocetool
author: ocetool developers
"""

EXAMPLES = r"""
- name: Firmware 11.2.1.0 on every adapter of the host
  ocetool.oneconnect.ocetool_firmware:
    device: "0000:03:00.0"
    image: /srv/firmware/oc14-11.2.1.0.ufi
    activate: reset
"""

RETURN = r"""
firmware:
  description: The running and stored firmware versions afterwards.
  returned: always
  type: dict
sections:
  description: Each section of the image with its C(action) (C(flashed), C(skipped_same), C(skipped_unsupported)).
  returned: always
  type: list
  elements: dict
reset_required:
  description: The stored firmware runs only after a reset or reboot.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ocetool.oneconnect.plugins.module_utils.ocetool import ACTIVATE_ARG, COMMON_ARGS, run_ocetool


def main():
    argument_spec = dict(
        COMMON_ARGS,
        image=dict(type="path", required=True),
        allow_downgrade=dict(type="bool", default=False),
        activate=ACTIVATE_ARG,
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    args = ["fw", "update", module.params["image"]]
    if module.params["allow_downgrade"]:
        args.append("--allow-downgrade")
    if module.check_mode:
        args.append("--dry-run")
    _, doc = run_ocetool(module, args)
    changed = bool(doc["changed"])
    result = dict(firmware=doc["firmware"], sections=doc["sections"], reset_required=doc["reset_required"])
    # As in ocetool_profile: a flash (or, in check mode, one that would happen) or one left stored
    # by an earlier run (reset_required: stored != running) is activated by activate=reset.
    pending = doc["reset_required"] or changed
    if module.params["activate"] == "reset" and pending:
        dry = ["--dry-run"] if module.check_mode else []
        _, reset = run_ocetool(module, ["reset"] + dry)
        changed = True
        if not module.check_mode:
            result.update(firmware=reset["firmware"], reset_required=reset["reset_required"])
    module.exit_json(changed=changed, **result)


if __name__ == "__main__":
    main()
