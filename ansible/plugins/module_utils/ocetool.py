# Shared by the ocetool modules: run the ocetool binary with --json and read its one document,
# and what check mode and diff mode read without taking a function from its driver.
# Copyright: ocetool developers. MIT OR Apache-2.0.

from __future__ import annotations

import json

# The JSON schema the modules understand ("schema" in every ocetool document).
SCHEMA = "ocetool/1"

COMMON_ARGS = dict(
    device=dict(type="str"),
    binary=dict(type="path", default="ocetool"),
    unbind=dict(type="bool", default=False),
)

# `activate`: when a stored change runs (the profile and firmware modules).
ACTIVATE_ARG = dict(type="str", choices=["next-boot", "reset"], default="next-boot")

# The ocetool commands that change nothing on the adapter: the only ones check mode runs, besides
# a command with --dry-run.
READ_ONLY_COMMANDS = (["query"], ["list"], ["fw", "inspect"])

# ocetool's stable error code (README "Error codes", exit 4) when a driver holds the function (or
# another function of the adapter in its IOMMU group) and --unbind was not given.
DRIVER_HELD = "bound-to-driver"


def read_only(args):
    """True when `ocetool ARGS` changes nothing: a dry run or a read-only command."""
    args = list(args)
    return "--dry-run" in args or any(args[:len(c)] == c for c in READ_ONLY_COMMANDS)


def run_ocetool(module, args, allow_codes=(0,), hand_off=True):
    """Runs `ocetool --json --yes [--device D] [--unbind] ARGS`.

    `--unbind` is passed when the task says `unbind: true`, `hand_off` allows it, and the task is
    not in check mode: check mode never takes a function from its driver, and runs only read-only
    commands (a changing one fails the task before ocetool starts).

    Returns (exit code, document). An exit code outside `allow_codes` fails the task with
    ocetool's own error message (error.message), its kind and exit code.
    """
    params = module.params
    if module.check_mode and not read_only(args):
        module.fail_json(msg="check mode runs only read-only ocetool commands, not %r" % " ".join(args))
    binary = module.get_bin_path(params["binary"], required=True)
    cmd = [binary, "--json", "--yes"]
    if params.get("device"):
        cmd += ["--device", params["device"]]
    if params.get("unbind") and hand_off and not module.check_mode:
        cmd.append("--unbind")
    cmd += list(args)
    rc, out, err = module.run_command(cmd)
    try:
        doc = json.loads(out)
    except ValueError:
        module.fail_json(msg="ocetool did not print a JSON document (exit %d): %s" % (rc, (err or out).strip()),
                         rc=rc, cmd=cmd)
    if doc.get("schema") != SCHEMA:
        module.fail_json(msg="ocetool speaks schema %r, these modules %r" % (doc.get("schema"), SCHEMA), cmd=cmd)
    if rc not in allow_codes:
        fail(module, rc, doc, cmd)
    return rc, doc


def fail(module, rc, doc, cmd=None):
    """Fails the task with the error of ocetool's document `doc` (exit code `rc`)."""
    error = doc.get("error") or {}
    module.fail_json(msg=error.get("message") or "ocetool exited %d" % rc, rc=rc,
                     kind=error.get("kind"), cmd=cmd, ocetool=doc)


def held_by_driver(rc, doc):
    """True when ocetool refused because a driver holds the function and --unbind was not given."""
    error = doc.get("error") or {}
    return rc == 4 and error.get("code") == DRIVER_HELD


def dry_run(module, args):
    """Runs `ocetool ARGS --dry-run` without --unbind: the adapter's own prediction.

    Returns the document, or None when a driver holds the function and the task allows ocetool to
    take it (`unbind: true`): then only the hand-off, which check mode never does, could answer.
    Any other error (a bad image, an unknown profile, a driver held without `unbind: true`) fails
    the task, as the run itself would.
    """
    rc, doc = run_ocetool(module, list(args) + ["--dry-run"], allow_codes=(0, 4), hand_off=False)
    if rc == 0:
        return doc
    if module.params["unbind"] and held_by_driver(rc, doc):
        return None
    return fail(module, rc, doc)


def read_view(module):
    """What `ocetool query` tells without --unbind, for check mode and the diff's before side.

    Returns (source, document):
      ("adapter", query): nothing holds the function (or it is an emulated adapter);
      ("kernel", query): a driver (be2net) holds it; what the kernel knows, the rest null;
      (None, None): the function is free but another function of the adapter in its IOMMU group
      is held by a driver, so nothing can be read without the hand-off.
    """
    rc, doc = run_ocetool(module, ["query"], allow_codes=(0, 4), hand_off=False)
    if rc == 0:
        return doc.get("source", "adapter"), doc
    if held_by_driver(rc, doc):
        return None, None
    return fail(module, rc, doc)


def unknown_warning(module, source, view, unknown):
    """Warns that check mode could not read `unknown` (a phrase) and reports a change for it."""
    device = module.params.get("device") or "the adapter"
    if source == "kernel":
        driver = (view.get("driver") or {}).get("name") or "a driver"
        why = "%s holds %s" % (driver, device)
    else:
        why = "another function of %s in its IOMMU group is held by a driver" % device
    module.warn("check mode: %s and check mode never takes a function from its driver, so %s is unknown; "
                "changed=true says a change cannot be ruled out" % (why, unknown))


def profile_label(ref):
    """`NAME (id N)`, as ocetool's text output names a profile; None for an unknown one."""
    if not ref:
        return None
    if ref.get("name") is None:
        return "id %s (not in the profile list)" % ref.get("id")
    return "%s (id %s)" % (ref["name"], ref["id"])


def view_header(module, source, view):
    """The diff's header for the state read by `read_view`."""
    device = module.params.get("device") or "the adapter"
    if source == "kernel":
        driver = (view.get("driver") or {}).get("name") or "a driver"
        return "%s: what the kernel knows while %s holds it (null: only the adapter can say)" % (device, driver)
    if source is None:
        return "%s: unknown (another function of the adapter is held by a driver)" % device
    return device


def diff(module, before, after, before_header):
    """The task's `diff` (only in diff mode)."""
    device = module.params.get("device") or "the adapter"
    after_header = "%s: %s" % (device, "after the run, as predicted" if module.check_mode else "after the run")
    return dict(before=before, after=after, before_header=before_header, after_header=after_header)
