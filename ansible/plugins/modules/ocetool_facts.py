#!/usr/bin/python
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: ocetool_facts
short_description: Facts about Emulex OneConnect OCe14000 adapters
description:
  - Runs C(ocetool list --json) and, with O(device), C(ocetool query --json), and returns them as
    the fact C(ocetool).
  - Check mode runs the same read-only commands, never with C(--unbind); while a driver (be2net)
    holds the function, C(ocetool.query) is then what the kernel knows (C(source) is C(kernel)).
version_added: "0.1.0"
options:
  list:
    description: Also list every OneConnect function in sysfs (C(ocetool list)).
    type: bool
    default: true
extends_documentation_fragment:
  - ocetool.oneconnect.ocetool
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    support: full
    platforms: posix
author: ocetool developers (@ocetool)
"""

EXAMPLES = r"""
- name: Read the adapter's state
  ocetool.oneconnect.ocetool_facts:
    device: "0000:03:00.0"
- ansible.builtin.debug:
    msg: "RoCE {{ ansible_facts.ocetool.query.roce_enabled }}"
"""

RETURN = r"""
ansible_facts:
  description: C(ocetool.list) (the C(list) document) and C(ocetool.query) (the C(query) document).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ocetool.oneconnect.plugins.module_utils.ocetool import COMMON_ARGS, run_ocetool


def main():
    argument_spec = dict(COMMON_ARGS, list=dict(type="bool", default=True))
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    facts = {}
    if module.params["list"]:
        facts["list"] = run_ocetool(module, ["list"])[1]
    if module.params["device"]:
        facts["query"] = run_ocetool(module, ["query"])[1]
    module.exit_json(changed=False, ansible_facts={"ocetool": facts})


if __name__ == "__main__":
    main()
