#!/usr/bin/python
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: ocetool_profile
short_description: The profile (NIC or RoCE) of an Emulex OneConnect OCe14000 adapter
description:
  - Makes O(state) the adapter's next-boot profile with C(ocetool set-profile), and with
    O(activate=reset) resets the chip (C(ocetool reset)) so that it runs now.
  - Idempotent. Fails with ocetool's own error message.
  - Check mode changes nothing and never takes the function from its driver, whatever O(unbind)
    says. It runs C(ocetool set-profile --dry-run) without C(--unbind); when a driver (be2net) holds
    the function and O(unbind=true), only the hand-off could read the profiles, so the module reads
    what the kernel knows instead (C(ocetool query), RV(source=kernel)), reports the profiles as
    unknown (null), C(changed=true) because a change cannot be ruled out, and a warning that says
    so. Without O(unbind), check mode fails as the run would.
  - Diff mode shows the running and next-boot profile and RoCE before and after. The before side is
    read without C(--unbind) (C(ocetool query)), so it never takes the network down; while be2net
    holds the function it shows what the kernel knows, the profiles null.
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
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: While a driver holds the function, the profiles are unknown and C(changed) is true (see the description).
  diff_mode:
    support: full
    details: While a driver holds the function, the before side holds what the kernel knows, the profiles null.
  platform:
    support: full
    platforms: posix
author: ocetool developers (@ocetool)
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
  description:
    - The running (C(active)) and next-boot (C(next)) profile afterwards, each C({id, name, roce}).
    - In check mode as they are now; null when a driver holds the function (RV(source=kernel)).
  returned: always
  type: dict
roce_enabled:
  description: RoCE in the running profile (in check mode now; null when not known).
  returned: always
  type: bool
reset_required:
  description: A stored change runs only after a reset or reboot (in check mode now; null when not known).
  returned: always
  type: bool
source:
  description:
    - C(adapter) when the adapter answered; in check mode C(kernel) when a driver holds the function
      and the answer is what the kernel knows, null when another function of the adapter in its
      IOMMU group is held by a driver and nothing could be read.
  returned: always
  type: str
  sample: adapter
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ocetool.oneconnect.plugins.module_utils.ocetool import (
    ACTIVATE_ARG,
    COMMON_ARGS,
    diff,
    dry_run,
    profile_label,
    read_view,
    run_ocetool,
    unknown_warning,
    view_header,
)

# `roce_enabled` after a reset into the profile `state` names (an ID: known only to the adapter).
ROCE_OF_STATE = {"nic": False, "roce": True}


def shown(profile, roce_enabled):
    """The diff's view of a state: each profile as `NAME (id N)`, and RoCE."""
    profile = profile or {}
    return dict(active=profile_label(profile.get("active")), next=profile_label(profile.get("next")),
                roce_enabled=roce_enabled)


def pending(doc):
    """A reset would change what runs: a stored change, or (in a dry run) one that would be stored."""
    return bool(doc["reset_required"] or (doc["changed"] and doc["target"]["id"] != doc["profile"]["active"]["id"]))


def predict(module):
    """Check mode: what the run would do, read without a hand-off."""
    state, reset = module.params["state"], module.params["activate"] == "reset"
    doc = dry_run(module, ["set-profile", state])
    if doc is None:
        source, view = read_view(module)
        roce = view.get("roce_enabled") if view else None
        unknown_warning(module, source, view, "the next-boot profile")
        result = dict(changed=True, source=source, profile=None, roce_enabled=roce, reset_required=None)
        if module._diff:
            after = dict(active=state if reset else None, next=state,
                         roce_enabled=ROCE_OF_STATE.get(state.lower()) if reset else roce)
            result["diff"] = diff(module, shown(None, roce), after, view_header(module, source, view))
        return result
    changed = bool(doc["changed"])
    activates = reset and pending(doc)
    if activates:
        run_ocetool(module, ["reset", "--dry-run"], hand_off=False)
        changed = True
    result = dict(changed=changed, source="adapter", profile=doc["profile"], roce_enabled=doc["roce_enabled"],
                  reset_required=doc["reset_required"])
    if module._diff:
        target = doc["target"]
        after = dict(active=profile_label(target if activates else doc["profile"]["active"]),
                     next=profile_label(target),
                     roce_enabled=target.get("roce") if activates else doc["roce_enabled"])
        result["diff"] = diff(module, shown(doc["profile"], doc["roce_enabled"]), after, module.params.get("device"))
    return result


def apply(module):
    """The run: set-profile, then a reset when asked for and a change is pending."""
    before = read_view(module) if module._diff else None
    doc = run_ocetool(module, ["set-profile", module.params["state"]])[1]
    changed = bool(doc["changed"])
    if module.params["activate"] == "reset" and pending(doc):
        doc = run_ocetool(module, ["reset"])[1]
        changed = True
    result = dict(changed=changed, source="adapter", profile=doc["profile"], roce_enabled=doc["roce_enabled"],
                  reset_required=doc["reset_required"])
    if before is not None:
        source, view = before
        was = shown(view.get("profile") if view else None, view.get("roce_enabled") if view else None)
        result["diff"] = diff(module, was, shown(doc["profile"], doc["roce_enabled"]), view_header(module, source, view))
    return result


def main():
    argument_spec = dict(
        COMMON_ARGS,
        state=dict(type="str", required=True),
        activate=ACTIVATE_ARG,
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    module.exit_json(**(predict(module) if module.check_mode else apply(module)))


if __name__ == "__main__":
    main()
