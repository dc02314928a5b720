#!/usr/bin/python
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations

DOCUMENTATION = r"""
module: ocetool_firmware
short_description: The firmware of an Emulex OneConnect OCe14000 adapter
description:
  - Flashes O(image) with C(ocetool fw update) when the adapter does not already hold it; only the
    sections that differ are written. Refuses an incompatible image, and an older one unless
    O(allow_downgrade). The new firmware runs after a reset (O(activate=reset)) or the next reboot.
  - Fails with ocetool's own error message (e.g. an image that is not flashable).
  - Check mode changes nothing and never takes the function from its driver, whatever O(unbind)
    says. It runs C(ocetool fw update --dry-run) without C(--unbind), which checks the image and,
    on an adapter ocetool reaches without a hand-off, compares each section with the flash. When a
    driver (be2net) holds the function and O(unbind=true), the flash cannot be read, so the module
    reports the firmware versions the driver reports (C(ocetool query), RV(source=kernel); null when
    it reports none), C(changed=true) because a flash cannot be ruled out, and a warning that says
    so; the version policy (O(allow_downgrade)) is then checked only by the run. Without O(unbind),
    check mode fails as the run would.
  - Diff mode shows the running and stored firmware versions before and after. The before side is
    read without C(--unbind) (C(ocetool query)), so it never takes the network down; while be2net
    holds the function it shows the versions the driver reports.
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
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: While a driver holds the function, the flash is not read and C(changed) is true (see the description).
  diff_mode:
    support: full
    details: While a driver holds the function, the before side holds the versions the driver reports.
  platform:
    support: full
    platforms: posix
author: ocetool developers (@ocetool)
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
  description:
    - The running and stored firmware versions afterwards (in check mode as they are now; while a
      driver holds the function, as the driver reports them).
  returned: always
  type: dict
sections:
  description:
    - Each section of the image with its C(action) (C(flashed), C(skipped_same), C(skipped_unsupported)).
    - Empty in check mode while a driver holds the function.
  returned: always
  type: list
  elements: dict
reset_required:
  description: The stored firmware runs only after a reset or reboot (null when not known).
  returned: always
  type: bool
source:
  description:
    - C(adapter) when the adapter answered; in check mode C(kernel) when a driver holds the function
      and the versions are the driver's, null when another function of the adapter in its IOMMU
      group is held by a driver and nothing could be read.
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
    read_view,
    run_ocetool,
    unknown_warning,
    view_header,
)


def versions(firmware):
    """The diff's view of a state: the running and stored versions."""
    firmware = firmware or {}
    return dict(running=firmware.get("running"), stored=firmware.get("stored"))


def update_args(module):
    """`fw update IMAGE [--allow-downgrade]`."""
    args = ["fw", "update", module.params["image"]]
    if module.params["allow_downgrade"]:
        args.append("--allow-downgrade")
    return args


def predict(module):
    """Check mode: what the run would do, read without a hand-off."""
    reset = module.params["activate"] == "reset"
    doc = dry_run(module, update_args(module))
    if doc is None:
        source, view = read_view(module)
        # The image passed ocetool's checks above; its version is what the flash holds after the run.
        image = run_ocetool(module, ["fw", "inspect", module.params["image"]], hand_off=False)[1]
        image_version = image.get("firmware_version") or image.get("version")
        now = versions(view.get("firmware") if view else None)
        unknown_warning(module, source, view, "whether the flash already holds the image")
        result = dict(changed=True, source=source, firmware=now, sections=[],
                      reset_required=view.get("reset_required") if view else None)
        if module._diff:
            after = dict(running=image_version if reset else now["running"], stored=image_version)
            result["diff"] = diff(module, now, after, view_header(module, source, view))
        return result
    flashes = bool(doc["changed"])
    # A flash (one that would happen) or one left stored by an earlier run (reset_required:
    # stored != running) is activated by activate=reset.
    activates = reset and (flashes or doc["reset_required"])
    if activates:
        run_ocetool(module, ["reset", "--dry-run"], hand_off=False)
    result = dict(changed=flashes or activates, source="adapter", firmware=doc["firmware"], sections=doc["sections"],
                  reset_required=doc["reset_required"])
    if module._diff:
        stored = doc["image_version"] if flashes else doc["firmware"]["stored"]
        after = dict(running=stored if activates else doc["firmware"]["running"], stored=stored)
        result["diff"] = diff(module, versions(doc["firmware"]), after, module.params.get("device"))
    return result


def apply(module):
    """The run: fw update, then a reset when asked for and new firmware is stored but not running."""
    before = read_view(module) if module._diff else None
    doc = run_ocetool(module, update_args(module))[1]
    changed = bool(doc["changed"])
    result = dict(firmware=doc["firmware"], sections=doc["sections"], reset_required=doc["reset_required"])
    if module.params["activate"] == "reset" and (changed or doc["reset_required"]):
        reset = run_ocetool(module, ["reset"])[1]
        changed = True
        result.update(firmware=reset["firmware"], reset_required=reset["reset_required"])
    result.update(changed=changed, source="adapter")
    if before is not None:
        source, view = before
        result["diff"] = diff(module, versions(view.get("firmware") if view else None), versions(result["firmware"]),
                              view_header(module, source, view))
    return result


def main():
    argument_spec = dict(
        COMMON_ARGS,
        image=dict(type="path", required=True),
        allow_downgrade=dict(type="bool", default=False),
        activate=ACTIVATE_ARG,
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    module.exit_json(**(predict(module) if module.check_mode else apply(module)))


if __name__ == "__main__":
    main()
