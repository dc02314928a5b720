# Shared by the ocetool modules: run the ocetool binary with --json and read its one document.
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


def run_ocetool(module, args, allow_codes=(0,)):
    """Runs `ocetool --json [--device D] [--unbind] --yes ARGS`.

    Returns (exit code, document). An exit code outside `allow_codes` fails the task with
    ocetool's own error message (error.message), its kind and exit code.
    """
    params = module.params
    binary = module.get_bin_path(params["binary"], required=True)
    cmd = [binary, "--json", "--yes"]
    if params.get("device"):
        cmd += ["--device", params["device"]]
    if params.get("unbind"):
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
        error = doc.get("error") or {}
        module.fail_json(msg=error.get("message") or "ocetool exited %d" % rc, rc=rc,
                         kind=error.get("kind"), cmd=cmd, ocetool=doc)
    return rc, doc
