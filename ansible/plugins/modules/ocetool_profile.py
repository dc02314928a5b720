#!/usr/bin/python
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: ocetool_profile
short_description: The profile (NIC or RoCE) of an Emulex OneConnect OCe14000 adapter
description:
  - Makes O(state) the adapter's next-boot profile with C(ocetool set-profile), and with
    O(activate=reset) resets the chip (C(ocetool reset)) so that it runs now.
  - Idempotent; check mode runs ocetool with C(--dry-run) and changes nothing.
  - Fails with ocetool's own error message.
version_added: "0.1.0"
options:
  state:
    description: C(nic), C(roce), or a profile ID from C(ocetool profiles).
    type: str
    required: true
  activate:
    description: C(next-boot) only stores the profile; C(reset) also resets the chip when a change is pending.
    type: str
    choices: [next-boot, reset]
    default: next-boot
extends_documentation_fragment:
  - ocetool.oneconnect.ocetool
author: ocetool developers
"""

EXAMPLES = r"""
- name: RoCE, running now
  ocetool.oneconnect.ocetool_profile:
    device: "0000:03:00.0"
    state: roce
    activate: reset
    unbind: true
"""

RETURN = r"""
profile:
  description: The running (C(active)) and next-boot (C(next)) profile afterwards, each C({id, name, roce}).
  returned: always
  type: dict
roce_enabled:
  description: RoCE in the running profile.
  returned: always
  type: bool
reset_required:
  description: A stored change runs only after a reset or reboot.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ocetool.oneconnect.plugins.module_utils.ocetool import ACTIVATE_ARG, COMMON_ARGS, run_ocetool


def main():
    argument_spec = dict(
        COMMON_ARGS,
        state=dict(type="str", required=True),
        activate=ACTIVATE_ARG,
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    dry = ["--dry-run"] if module.check_mode else []
    _, doc = run_ocetool(module, ["set-profile", module.params["state"]] + dry)
    changed = bool(doc["changed"])
    result = dict(profile=doc["profile"], roce_enabled=doc["roce_enabled"], reset_required=doc["reset_required"])
    # With --dry-run, reset_required describes the adapter as it is: a profile that would become
    # pending counts too.
    pending = doc["reset_required"] or (changed and doc["target"]["id"] != doc["profile"]["active"]["id"])
    if module.params["activate"] == "reset" and pending:
        _, reset = run_ocetool(module, ["reset"] + dry)
        changed = True
        if not module.check_mode:
            result = dict(profile=reset["profile"], roce_enabled=reset["roce_enabled"],
                          reset_required=reset["reset_required"])
    module.exit_json(changed=changed, **result)


if __name__ == "__main__":
    main()
